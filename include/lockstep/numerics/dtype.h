// Element types of tensors that lockstep reads and compares, and their names
// in the formats it meets (torch dtype strings, torch storage classes, numpy
// descr codes, MindSpore names).
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_DTYPE_H_
#define LOCKSTEP_NUMERICS_DTYPE_H_

#include <cstddef>
#include <optional>
#include <string_view>

namespace lockstep {

enum class DType {
  kBool,
  kUInt8,
  kInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

// Bytes per element.
size_t DTypeSize(DType t);
bool IsFloatingPoint(DType t);  // fp16, bf16, fp32, fp64
// "torch.float32", "torch.bfloat16", "torch.int64", "torch.bool", ...
std::string_view TorchDTypeName(DType t);
// Parses "torch.float32", "float32", "Float32" (MindSpore), "torch.float",
// "torch.half", "torch.long", ... Returns nullopt when unknown.
std::optional<DType> ParseDTypeName(std::string_view name);
// torch storage class names: "FloatStorage", "BFloat16Storage", ...
std::optional<DType> DTypeFromTorchStorage(std::string_view storage_class);
std::string_view TorchStorageName(DType t);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_DTYPE_H_
