#include "lockstep/numerics/dtype.h"

#include <array>
#include <string>

namespace lockstep {
namespace {

struct DTypeInfo {
  DType type;
  size_t size;
  std::string_view torch_name;    // torch.float32
  std::string_view storage_name;  // FloatStorage
};

constexpr std::array<DTypeInfo, 13> kInfo = {{
    {DType::kBool, 1, "torch.bool", "BoolStorage"},
    {DType::kUInt8, 1, "torch.uint8", "ByteStorage"},
    {DType::kInt8, 1, "torch.int8", "CharStorage"},
    {DType::kInt16, 2, "torch.int16", "ShortStorage"},
    {DType::kUInt16, 2, "torch.uint16", "UInt16Storage"},
    {DType::kInt32, 4, "torch.int32", "IntStorage"},
    {DType::kUInt32, 4, "torch.uint32", "UInt32Storage"},
    {DType::kInt64, 8, "torch.int64", "LongStorage"},
    {DType::kUInt64, 8, "torch.uint64", "UInt64Storage"},
    {DType::kFloat16, 2, "torch.float16", "HalfStorage"},
    {DType::kBFloat16, 2, "torch.bfloat16", "BFloat16Storage"},
    {DType::kFloat32, 4, "torch.float32", "FloatStorage"},
    {DType::kFloat64, 8, "torch.float64", "DoubleStorage"},
}};

const DTypeInfo& Info(DType t) { return kInfo[static_cast<size_t>(t)]; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

size_t DTypeSize(DType t) { return Info(t).size; }

bool IsFloatingPoint(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 ||
         t == DType::kFloat32 || t == DType::kFloat64;
}

std::string_view TorchDTypeName(DType t) { return Info(t).torch_name; }
std::string_view TorchStorageName(DType t) { return Info(t).storage_name; }

std::optional<DType> ParseDTypeName(std::string_view name) {
  std::string n = Lower(name);
  if (n.rfind("torch.", 0) == 0) n = n.substr(6);
  if (n.rfind("numpy.", 0) == 0) n = n.substr(6);
  if (n == "float" || n == "float32") return DType::kFloat32;
  if (n == "double" || n == "float64") return DType::kFloat64;
  if (n == "half" || n == "float16") return DType::kFloat16;
  if (n == "bfloat16") return DType::kBFloat16;
  if (n == "bool" || n == "bool_") return DType::kBool;
  if (n == "uint8") return DType::kUInt8;
  if (n == "int8") return DType::kInt8;
  if (n == "short" || n == "int16") return DType::kInt16;
  if (n == "uint16") return DType::kUInt16;
  if (n == "int" || n == "int32") return DType::kInt32;
  if (n == "uint32") return DType::kUInt32;
  if (n == "long" || n == "int64") return DType::kInt64;
  if (n == "uint64") return DType::kUInt64;
  return std::nullopt;
}

std::optional<DType> DTypeFromTorchStorage(std::string_view storage_class) {
  for (const auto& info : kInfo) {
    if (info.storage_name == storage_class) return info.type;
  }
  return std::nullopt;
}

}  // namespace lockstep
