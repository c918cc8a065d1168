#include "format/strided.h"

#include <algorithm>
#include <cstring>

namespace lockstep::internal {
namespace {

bool HasZeroDim(const std::vector<int64_t>& shape) {
  return std::find(shape.begin(), shape.end(), 0) != shape.end();
}

void CopyElement(const std::byte* src, size_t n, bool swap, std::byte* dst) {
  if (!swap) {
    std::memcpy(dst, src, n);
    return;
  }
  for (size_t i = 0; i < n; ++i) dst[i] = src[n - 1 - i];
}

// One row of `n` elements of N bytes, `stride` elements apart. A fixed N
// lets the compiler turn each copy into one load and store.
template <size_t N>
std::byte* CopyRow(const std::byte* src, int64_t n, int64_t stride, bool swap,
                   std::byte* out) {
  for (int64_t j = 0; j < n; ++j, out += N) {
    CopyElement(src + j * stride * static_cast<int64_t>(N), N, swap, out);
  }
  return out;
}

std::byte* CopyRowAnySize(const std::byte* src, size_t elem, int64_t n,
                          int64_t stride, bool swap, std::byte* out) {
  if (!swap && stride == 1) {
    std::memcpy(out, src, n * elem);
    return out + n * elem;
  }
  switch (elem) {
    case 1:
      return CopyRow<1>(src, n, stride, swap, out);
    case 2:
      return CopyRow<2>(src, n, stride, swap, out);
    case 4:
      return CopyRow<4>(src, n, stride, swap, out);
    case 8:
      return CopyRow<8>(src, n, stride, swap, out);
    default:
      for (int64_t j = 0; j < n; ++j, out += elem) {
        CopyElement(src + j * stride * elem, elem, swap, out);
      }
      return out;
  }
}

}  // namespace

std::optional<int64_t> StridedExtent(int64_t offset,
                                     const std::vector<int64_t>& shape,
                                     const std::vector<int64_t>& stride) {
  if (HasZeroDim(shape)) return 0;
  int64_t last = offset;
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t span;
    if (__builtin_mul_overflow(shape[k] - 1, stride[k], &span) ||
        __builtin_add_overflow(last, span, &last)) {
      return std::nullopt;
    }
  }
  if (last == INT64_MAX) return std::nullopt;
  return last + 1;
}

bool IsCContiguous(const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& stride) {
  if (HasZeroDim(shape)) return true;
  int64_t expected = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 1) continue;
    if (stride[k] != expected ||
        __builtin_mul_overflow(expected, shape[k], &expected)) {
      return false;
    }
  }
  return true;
}

void GatherStrided(const std::byte* storage, size_t elem_size, int64_t offset,
                   const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& stride, bool swap,
                   std::byte* out) {
  if (HasZeroDim(shape)) return;
  if (shape.empty()) {
    CopyElement(storage + offset * elem_size, elem_size, swap, out);
    return;
  }
  const size_t ndim = shape.size();
  const int64_t row_n = shape.back(), row_stride = stride.back();
  std::vector<int64_t> index(ndim, 0);
  int64_t base = offset;  // storage element where the current row starts
  for (;;) {
    out = CopyRowAnySize(storage + base * elem_size, elem_size, row_n,
                         row_stride, swap, out);
    // Odometer over the outer dims: step dim k, carry into k - 1.
    size_t k = ndim - 1;
    for (;;) {
      if (k == 0) return;
      --k;
      base += stride[k];
      if (++index[k] < shape[k]) break;
      base -= stride[k] * shape[k];
      index[k] = 0;
    }
  }
}

}  // namespace lockstep::internal
