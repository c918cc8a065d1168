// Reading safetensors files (huggingface/safetensors), without LibTorch.
//
// Layout:
//   bytes [0, 8)       N, the header's length, unsigned 64-bit little-endian
//   bytes [8, 8 + N)   a JSON object (UTF-8, may end in spaces):
//                        {"<name>": {"dtype": "F32", "shape": [2, 3],
//                                    "data_offsets": [begin, end]}, ...,
//                         "__metadata__": {"<key>": "<value>", ...}}
//   bytes [8 + N, end) the data: tensor <name> is bytes [begin, end) of it,
//                      C order, little-endian
// dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL.
// The offsets of all tensors, sorted, must tile the data exactly: no gaps,
// no overlaps, nothing after the last (the library refuses such files too).
//
// Thread safety: the functions are reentrant.
#ifndef LOCKSTEP_FORMAT_SAFETENSORS_H_
#define LOCKSTEP_FORMAT_SAFETENSORS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/checkpoint.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {

// Largest header accepted (the safetensors library's own limit).
inline constexpr uint64_t kMaxSafetensorsHeader = uint64_t{100} << 20;

// True when `bytes` begin like a safetensors file: a header length that
// fits the file and a header that starts with '{'.
bool LooksLikeSafetensors(std::string_view bytes);

// One tensor of the header.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // bytes, relative to the data
};

struct SafetensorsHeader {
  std::vector<SafetensorsTensor> tensors;  // in header order
  PyValue metadata;                        // None when absent
  uint64_t data_offset = 0;                // 8 + N
};

// Parses and checks the header of the file in `bytes` (all of it: the
// offsets are checked against the data's size). `name` stands for the path
// in messages. Corruption for anything malformed (a short file, a header
// length beyond the file or over kMaxSafetensorsHeader, bad JSON, a tensor
// without dtype, shape or data_offsets, offsets out of range, overlapping,
// leaving holes or not matching the shape); NotSupported for an unknown
// dtype. Messages name the tensor: "m.safetensors: tensor 'w': data_offsets
// [0, 12] hold 12 bytes, but shape [2, 3] of F32 needs 24".
StatusOr<SafetensorsHeader> ParseSafetensorsHeader(std::string_view bytes,
                                                   const std::string& name);

// Reads every tensor of the file in `bytes`: a view into them (holding
// `owner`) where aligned, else a copy (null `owner`: always a copy).
// REQUIRES: `owner` keeps `bytes` valid and unchanged while it lives.
StatusOr<Checkpoint> ReadSafetensors(std::string_view bytes,
                                     std::shared_ptr<const void> owner,
                                     const std::string& name);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_SAFETENSORS_H_
