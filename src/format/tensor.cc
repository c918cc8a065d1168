#include "lockstep/format/tensor.h"

#include <cstdio>

#include "lockstep/format/crc32.h"

namespace lockstep {

Tensor Tensor::FromBytes(DType dtype, std::vector<int64_t> shape,
                         std::string bytes) {
  auto holder = std::make_shared<const std::string>(std::move(bytes));
  const std::byte* p = reinterpret_cast<const std::byte*>(holder->data());
  return Tensor(dtype, std::move(shape), p, std::move(holder));
}

int64_t Tensor::numel() const { return NumElements(shape_); }

Tensor Tensor::WithFileRegion(std::string path, uint64_t offset) const {
  Tensor t = *this;
  t.region_ =
      std::make_shared<const FileRegion>(FileRegion{std::move(path), offset});
  return t;
}

Tensor Tensor::WithUnverifiedCrc32(uint32_t crc) const {
  Tensor t = *this;
  t.unverified_crc32_ = crc;
  return t;
}

Status VerifyTensorCrc32(const Tensor& t, const std::string& name) {
  if (!t.unverified_crc32()) return Status::Ok();
  uint32_t actual = Crc32(
      std::string_view(reinterpret_cast<const char*>(t.data()), t.nbytes()));
  if (actual == *t.unverified_crc32()) return Status::Ok();
  char msg[96];
  std::snprintf(msg, sizeof msg,
                "the tensor's bytes have CRC-32 %08x, the "
                "file records %08x",
                actual, *t.unverified_crc32());
  return Status::Corruption(name, msg);
}

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d == 0) {  // numpy's rule: the other dims must still multiply
      empty = true;
      continue;
    }
    if (n > INT64_MAX / d) return -1;
    n *= d;
  }
  return empty ? 0 : n;
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  out += "]";
  return out;
}

}  // namespace lockstep
