// Between LibTorch tensors and lockstep's own: dtype mapping and host copies.
// Thread safety: pure functions.
#ifndef LOCKSTEP_TORCH_TENSOR_BRIDGE_H_
#define LOCKSTEP_TORCH_TENSOR_BRIDGE_H_

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <optional>

#include "lockstep/core/status.h"
#include "lockstep/format/tensor.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {

// lockstep's dtype for a LibTorch scalar type; nullopt for types lockstep
// does not store (complex, quantized, fp8, ...).
std::optional<DType> FromScalarType(c10::ScalarType t);
c10::ScalarType ToScalarType(DType t);

// A lockstep::Tensor holding `t`'s elements in C order on the host. Shares
// `t`'s storage when `t` is a contiguous CPU tensor (no copy), otherwise
// copies (device to host, strided to contiguous). The result keeps the
// storage alive.
// Errors: InvalidArgument for dtypes lockstep does not store, sparse or
// undefined tensors.
StatusOr<Tensor> ToHostTensor(const at::Tensor& t);

// A LibTorch CPU tensor with a copy of `t`'s elements.
at::Tensor ToTorchTensor(const Tensor& t);

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_TENSOR_BRIDGE_H_
