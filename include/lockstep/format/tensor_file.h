// Reading a dumped tensor file by its extension: ".pt" (torch.save zip) or
// ".npy". Both are memory-mapped where possible (zero-copy).
// Thread safety: thread-safe.
#ifndef LOCKSTEP_FORMAT_TENSOR_FILE_H_
#define LOCKSTEP_FORMAT_TENSOR_FILE_H_

#include <string>

#include "lockstep/core/status.h"
#include "lockstep/format/tensor.h"

namespace lockstep {

// Reads `path` as .pt or .npy (by extension; other extensions are tried as
// .npy when they start with numpy's magic, else as .pt). Errors name the file.
StatusOr<Tensor> ReadTensorFile(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_TENSOR_FILE_H_
