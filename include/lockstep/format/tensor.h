// Tensor: a dense, C-contiguous, little-endian block of elements with a
// dtype and a shape, as read from a .pt or .npy file. The bytes are owned
// through a shared holder (a memory map or a heap buffer), so a Tensor is
// cheap to copy and may point into a mapped file.
// Thread safety: immutable after construction; safe to share across threads.
#ifndef LOCKSTEP_FORMAT_TENSOR_H_
#define LOCKSTEP_FORMAT_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {

class Tensor {
 public:
  Tensor() = default;
  // REQUIRES: `data` holds numel(shape) * DTypeSize(dtype) bytes in C order,
  // little-endian, and stays valid while `owner` lives.
  Tensor(DType dtype, std::vector<int64_t> shape, const std::byte* data,
         std::shared_ptr<const void> owner)
      : dtype_(dtype),
        shape_(std::move(shape)),
        data_(data),
        owner_(std::move(owner)) {}

  // A tensor owning a copy of `bytes`.
  static Tensor FromBytes(DType dtype, std::vector<int64_t> shape,
                          std::string bytes);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const;
  size_t nbytes() const {
    return static_cast<size_t>(numel()) * DTypeSize(dtype_);
  }
  const std::byte* data() const { return data_; }
  template <typename T>
  const T* data_as() const {
    return reinterpret_cast<const T*>(data_);
  }

  // Where the bytes also lie, unchanged, in a file: set by ReadTensorFile
  // when the tensor is a zero-copy view of a file, so that large tensors can
  // be streamed (compare/stream_metrics.h) a chunk at a time.
  struct FileRegion {
    std::string path;
    uint64_t offset = 0;
  };
  const FileRegion* file_region() const { return region_.get(); }
  // A copy of this tensor that records its file region.
  Tensor WithFileRegion(std::string path, uint64_t offset) const;

  // The CRC-32 that the file records for exactly this tensor's bytes, not
  // yet checked: set by readers that leave the check to whoever reads the
  // bytes anyway (a large tensor streamed once; see PtReadOptions). Whoever
  // uses data() of such a tensor checks it first (VerifyTensorCrc32).
  const std::optional<uint32_t>& unverified_crc32() const {
    return unverified_crc32_;
  }
  Tensor WithUnverifiedCrc32(uint32_t crc) const;

 private:
  DType dtype_ = DType::kFloat32;
  std::vector<int64_t> shape_;
  const std::byte* data_ = nullptr;
  std::shared_ptr<const void> owner_;
  std::shared_ptr<const FileRegion> region_;
  std::optional<uint32_t> unverified_crc32_;
};

// Ok when `t` has no unverified CRC-32 or its bytes match it; else
// Corruption naming `name` with both values.
Status VerifyTensorCrc32(const Tensor& t, const std::string& name);

// Product of dims (1 for a 0-d shape). Returns -1 if a dim is negative or the
// product of the dims other than 0 overflows int64, as numpy refuses such a
// shape: (0, INT64_MAX, INT64_MAX) holds no element but is no valid shape.
int64_t NumElements(const std::vector<int64_t>& shape);

// "[10, 4]" — Python's str() of a list of ints, as msprobe prints shapes.
std::string ShapeToString(const std::vector<int64_t>& shape);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_TENSOR_H_
