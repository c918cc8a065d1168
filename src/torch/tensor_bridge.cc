#include "lockstep/torch/tensor_bridge.h"

#include <ATen/ATen.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace lockstep {

std::optional<DType> FromScalarType(c10::ScalarType t) {
  switch (t) {
    case c10::ScalarType::Bool:
      return DType::kBool;
    case c10::ScalarType::Byte:
      return DType::kUInt8;
    case c10::ScalarType::Char:
      return DType::kInt8;
    case c10::ScalarType::Short:
      return DType::kInt16;
    case c10::ScalarType::Int:
      return DType::kInt32;
    case c10::ScalarType::Long:
      return DType::kInt64;
    case c10::ScalarType::Half:
      return DType::kFloat16;
    case c10::ScalarType::BFloat16:
      return DType::kBFloat16;
    case c10::ScalarType::Float:
      return DType::kFloat32;
    case c10::ScalarType::Double:
      return DType::kFloat64;
    default:
      return std::nullopt;
  }
}

c10::ScalarType ToScalarType(DType t) {
  switch (t) {
    case DType::kBool:
      return c10::ScalarType::Bool;
    case DType::kUInt8:
      return c10::ScalarType::Byte;
    case DType::kInt8:
      return c10::ScalarType::Char;
    case DType::kInt16:
      return c10::ScalarType::Short;
    case DType::kInt32:
      return c10::ScalarType::Int;
    case DType::kInt64:
      return c10::ScalarType::Long;
    case DType::kFloat16:
      return c10::ScalarType::Half;
    case DType::kBFloat16:
      return c10::ScalarType::BFloat16;
    case DType::kFloat32:
      return c10::ScalarType::Float;
    case DType::kFloat64:
      return c10::ScalarType::Double;
    // LibTorch 1.13 has no unsigned 16/32/64-bit types: widen to int64.
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return c10::ScalarType::Long;
  }
  return c10::ScalarType::Float;
}

StatusOr<Tensor> ToHostTensor(const at::Tensor& t) {
  if (!t.defined()) return Status::InvalidArgument("tensor", "undefined");
  if (t.is_sparse())
    return Status::InvalidArgument("tensor", "sparse tensors are not stored");
  std::optional<DType> dtype = FromScalarType(t.scalar_type());
  if (!dtype) {
    return Status::InvalidArgument(
        "tensor", std::string("dtype not stored by lockstep: ") +
                      c10::toString(t.scalar_type()));
  }
  at::Tensor host = t.detach();
  if (!host.device().is_cpu()) host = host.to(at::kCPU);
  if (host.is_conj()) host = host.resolve_conj();
  if (host.is_neg()) host = host.resolve_neg();
  host = host.contiguous();
  std::vector<int64_t> shape(host.sizes().begin(), host.sizes().end());
  const auto* data = static_cast<const std::byte*>(host.data_ptr());
  auto owner = std::make_shared<at::Tensor>(std::move(host));
  return Tensor(*dtype, std::move(shape), data,
                std::shared_ptr<const void>(owner, owner.get()));
}

at::Tensor ToTorchTensor(const Tensor& t) {
  at::Tensor out =
      at::empty(t.shape(), at::TensorOptions().dtype(ToScalarType(t.dtype())));
  if (t.dtype() == DType::kUInt16 || t.dtype() == DType::kUInt32 ||
      t.dtype() == DType::kUInt64) {
    int64_t* dst = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype() == DType::kUInt16) {
        dst[i] = t.data_as<uint16_t>()[i];
      } else if (t.dtype() == DType::kUInt32) {
        dst[i] = t.data_as<uint32_t>()[i];
      } else {
        dst[i] = static_cast<int64_t>(t.data_as<uint64_t>()[i]);
      }
    }
    return out;
  }
  if (t.nbytes() > 0) std::memcpy(out.data_ptr(), t.data(), t.nbytes());
  return out;
}

}  // namespace lockstep
