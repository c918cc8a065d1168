#include "lockstep/format/tensor.h"

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

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
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
