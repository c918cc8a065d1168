// Writing one tensor as torch.save(tensor, path) does, without LibTorch, so
// that msprobe's PyTorch compare (which loads only .pt files, with
// torch.load(..., weights_only=True)) reads lockstep's tensor dumps.
//
// The bytes are those torch 1.13's torch.save writes for a contiguous CPU
// tensor that does not require grad (tests/format/pt_writer_test.cc and
// tests/python/pt_writer_test.py compare them byte for byte):
//   an uncompressed ZIP archive (layout: src/format/zip_writer.h) with
//   <stem>/data.pkl   pickle protocol 2:
//                       torch._utils._rebuild_tensor_v2(
//                           persistent_id(('storage', torch.FloatStorage,
//                                          '0', 'cpu', numel)),
//                           0, size, stride, False,
//                           collections.OrderedDict())
//                     with contiguous strides (a stride is the product of
//                     the later dims, each at least 1, as torch computes it)
//   <stem>/data/0     the raw little-endian elements, 64-byte aligned
//   <stem>/version    "3\n"
// <stem> is the file's name without its directory and last extension, as
// torch names it ("Functional.linear.0.forward.input.0" for
// ".../Functional.linear.0.forward.input.0.pt").
//
// Element types: bool, uint8, int8, int16, int32, int64, float16, bfloat16,
// float32, float64 (storages BoolStorage, ByteStorage, CharStorage,
// ShortStorage, IntStorage, LongStorage, HalfStorage, BFloat16Storage,
// FloatStorage, DoubleStorage). uint16/32/64 have no storage class that
// torch 1.13 loads and are NotSupported (save those as .npy).
//
// Thread safety: pure functions.
#ifndef LOCKSTEP_FORMAT_PT_WRITER_H_
#define LOCKSTEP_FORMAT_PT_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/format/tensor.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {

struct PtWriteOptions {
  // false: write the file in place (core/file.h WriteFileDirect; a failed
  // write leaves no file) instead of temporary file + rename.
  bool atomic = true;
  // ZIP records whose size or offset reach this many bytes get ZIP64
  // fields, as torch's writer decides at 0xFFFFFFFF. Lowered only by tests.
  uint64_t zip64_from_bytes = 0xFFFFFFFF;
};

// Whether EncodePt can write tensors of `dtype`.
bool PtSupportsDType(DType dtype);

// The name torch.save gives the records of a file saved at `path`: the last
// path component without its last ".extension"; "archive" when that is
// empty (torch refuses such a path; its in-memory saves use "archive").
std::string PtArchiveName(std::string_view path);

// The bytes torch.save writes for a tensor equal to `t` under records
// named `archive_name`/... Errors: NotSupported naming the dtype for
// uint16/32/64; InvalidArgument for an archive name of 32 KiB or more.
// REQUIRES: t's data is valid for t.nbytes() bytes.
StatusOr<std::string> EncodePt(const Tensor& t, std::string_view archive_name,
                               const PtWriteOptions& options = {});

// Writes EncodePt(t, PtArchiveName(path)) to `path`, atomically (temporary
// file + rename) unless options.atomic is false. Errors: EncodePt's, and
// IoError naming the path.
Status WritePt(const std::string& path, const Tensor& t,
               const PtWriteOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_PT_WRITER_H_
