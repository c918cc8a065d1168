// Reading and writing a dumped tensor file by its extension: ".pt"
// (torch.save zip, format/pt_reader.h, pt_writer.h) or ".npy" (npy.h).
// Reads are memory-mapped where possible (zero-copy).
// Thread safety: thread-safe.
#ifndef LOCKSTEP_FORMAT_TENSOR_FILE_H_
#define LOCKSTEP_FORMAT_TENSOR_FILE_H_

#include <string>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/tensor.h"

namespace lockstep {

// The two file formats of msprobe's layout. msprobe's PyTorch compare loads
// only .pt; its MindSpore side and numpy load .npy.
enum class TensorFileFormat { kPt, kNpy };

// ".pt" or ".npy".
std::string_view TensorFileExtension(TensorFileFormat format);

// Writes `t` to `path` in the format its extension names: ".pt" or ".pth"
// as torch.save writes it (WritePt), anything else as numpy.save does
// (WriteNpy, with `npy`'s bfloat16 rule). Atomically (temporary file +
// rename) unless npy.atomic is false, for either format.
// Errors: WritePt's / WriteNpy's (NotSupported for a .pt of uint16/32/64).
Status WriteTensorFile(const std::string& path, const Tensor& t,
                       const NpyWriteOptions& npy = {});

// Reads `path` as .pt or .npy (by extension; other extensions are tried as
// .npy when they start with numpy's magic, else as .pt). Errors name the file.
// Only a regular file is read, opened without following a symbolic link
// and without blocking (a FIFO or a device is refused, never read).
// A .pt storage's CRC-32 is checked, except for a storage of 1 MiB or more
// that the tensor views whole: the result then carries the recorded value
// (Tensor::unverified_crc32) and the caller checks it when it reads the
// bytes (VerifyTensorCrc32, or while streaming).
StatusOr<Tensor> ReadTensorFile(const std::string& path);

// The path of tensor `data_name` of a dump whose dump.json lies in `dir`:
// `dir/dump_tensor_data/data_name`, if that stays inside
// `dir/dump_tensor_data`: `data_name` is relative, has no ".." component and
// no NUL, and neither dump_tensor_data nor any component below it is a
// symbolic link; the file must be a regular file. Errors: InvalidArgument
// naming `data_name` and why it is refused ("leaves dump_tensor_data",
// "symbolic link", "not a regular file"); NotFound when it is absent.
StatusOr<std::string> ResolveTensorPath(const std::string& dir,
                                        const std::string& data_name);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_TENSOR_FILE_H_
