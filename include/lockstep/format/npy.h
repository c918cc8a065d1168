// NumPy .npy files: reading into Tensors and writing them, byte-compatible
// with numpy.save (numpy 1.24 checked by tests/data/npy/make_npy.py).
//
// File layout (numpy/lib/format.py):
//   "\x93NUMPY" major minor
//   header length: uint16 LE (version 1.0) or uint32 LE (2.0, 3.0)
//   header: a Python dict literal, latin-1 (1.0, 2.0) or UTF-8 (3.0):
//     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
//     padded with spaces and a final '\n' so the data starts at a multiple
//     of 64 bytes (older numpy: 16)
//   data: numel * itemsize bytes, C order unless fortran_order.
//
// Element types (descr): '<f2' '<f4' '<f8', '|i1' '<i2' '<i4' '<i8',
// '|u1' '<u2' '<u4' '<u8', '|b1'; the same with '>' (big-endian) or '='
// (native). bfloat16 is not a numpy type: ml_dtypes saves it with descr
// 'bfloat16' when numpy can name the type, which this reader accepts, or as
// the raw void type '<V2', which it rejects (NotSupported: a 2-byte void may
// be anything). Other descrs (complex, strings, objects, records) are
// NotSupported.
//
// Thread safety: pure functions.
#ifndef LOCKSTEP_FORMAT_NPY_H_
#define LOCKSTEP_FORMAT_NPY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/tensor.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {

inline constexpr std::string_view kNpyMagic = "\x93NUMPY";
inline constexpr size_t kNpyAlign = 64;

// What a .npy header says.
struct NpyHeader {
  int major = 1;  // format version: 1, 2 or 3
  int minor = 0;
  std::string descr;  // "<f4", "|b1", "bfloat16", ...
  DType dtype = DType::kFloat32;
  bool big_endian = false;  // descr '>' (elements are byte-swapped on read)
  bool fortran_order = false;
  std::vector<int64_t> shape;  // () for a 0-d array
  size_t data_offset = 0;      // bytes before the data
  size_t data_bytes = 0;       // numel * itemsize
};

// Parses and checks the header of a .npy file held in `bytes`: magic,
// version, the dict (exactly the keys descr, fortran_order, shape, as numpy
// requires; Python 2 'L' suffixes accepted), dims >= 0, and that the data
// fits in `bytes` (bytes after the data are ignored, as numpy does).
// Errors: Corruption (malformed, truncated), NotSupported (dtype, version).
// `subject` names the file in messages.
StatusOr<NpyHeader> ParseNpyHeader(std::string_view bytes,
                                   std::string_view subject);

// Reads a .npy file. Little-endian C-order data is not copied: the Tensor
// points into a read-only memory map of the file, which it keeps alive
// (unless the data offset is not a multiple of the element size, then it is
// copied to stay aligned). Big-endian data is byte-swapped and Fortran-order
// data transposed, into a C-order little-endian copy.
StatusOr<Tensor> ReadNpy(const std::string& path);

// As ReadNpy, from bytes in memory. The Tensor points into `bytes` without
// copying when it can, and then shares ownership of `owner`, which must keep
// `bytes` alive; with a null owner the data is always copied.
StatusOr<Tensor> ReadNpyFromBuffer(std::string_view bytes,
                                   std::string_view subject,
                                   std::shared_ptr<const void> owner = nullptr);

// How bfloat16 tensors are written, since numpy has no bfloat16.
enum class NpyBFloat16 {
  // Widened exactly to float32 ('<f4'): every numpy reads it, and msprobe's
  // compare widens bf16 to fp32 anyway; the dtype is lost from the file
  // (dump.json still says "torch.bfloat16"). The default.
  kWidenToFloat32,
  // Raw 16-bit values with descr 'bfloat16': lossless, read back by this
  // reader and by numpy once ml_dtypes is imported; plain numpy refuses it.
  kDescrBFloat16,
};

struct NpyWriteOptions {
  NpyBFloat16 bfloat16 = NpyBFloat16::kWidenToFloat32;
  // false: write the file in place (core/file.h WriteFileDirect; a failed
  // write leaves no file) instead of temporary file + rename.
  bool atomic = true;
};

// numpy's descr for a dtype: "<f4", "|b1", "|u1", ... For bfloat16:
// "bfloat16" (the widened form is "<f4").
std::string NpyDescr(DType dtype);

// The bytes numpy.save(f, a) writes for an array equal to `t`: version 1.0
// (2.0 only if the header needs more than 65535 bytes), keys sorted, numpy's
// 21-character growth padding, data aligned to 64 bytes, C order,
// little-endian. REQUIRES: t's data is valid for t.nbytes() bytes.
std::string EncodeNpy(const Tensor& t, const NpyWriteOptions& options = {});

// The header EncodeNpy(t, options) begins with. Its data follows: t's bytes
// as they are, unless NpyWidensBFloat16(t, options).
std::string EncodeNpyHeaderOf(const Tensor& t,
                              const NpyWriteOptions& options = {});
// Whether EncodeNpy(t, options) widens t's bfloat16 data to float32.
bool NpyWidensBFloat16(const Tensor& t, const NpyWriteOptions& options);

// Writes EncodeNpy(t) to `path`, atomically (temporary file + rename)
// unless options.atomic is false.
Status WriteNpy(const std::string& path, const Tensor& t,
                const NpyWriteOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_NPY_H_
