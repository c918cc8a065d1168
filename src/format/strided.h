// Strided views of a storage: the bounds check and the gather into C order,
// shared by the .pt reader and anything else that reads views. Private to
// src/format.
#ifndef LOCKSTEP_SRC_FORMAT_STRIDED_H_
#define LOCKSTEP_SRC_FORMAT_STRIDED_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace lockstep::internal {

// One past the highest storage element that the view (offset, shape, stride)
// reads: offset + sum((shape[k] - 1) * stride[k]) + 1, or 0 when the view is
// empty. nullopt when that overflows int64.
// REQUIRES: shape.size() == stride.size(); all values >= 0.
std::optional<int64_t> StridedExtent(int64_t offset,
                                     const std::vector<int64_t>& shape,
                                     const std::vector<int64_t>& stride);

// True when the view reads its elements in C order without gaps, as torch's
// is_contiguous() decides (strides of dims of size 1 do not matter).
bool IsCContiguous(const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& stride);

// Copies the view's elements, each `elem_size` bytes, in C order into `out`,
// reversing the bytes of each element when `swap`.
// REQUIRES: StridedExtent(offset, shape, stride) elements are readable at
// `storage`; `out` has room for numel(shape) * elem_size bytes.
void GatherStrided(const std::byte* storage, size_t elem_size, int64_t offset,
                   const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& stride, bool swap,
                   std::byte* out);

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_FORMAT_STRIDED_H_
