// Exporting a dump to msprobe's layout (docs/msprobe_reference.md §2.1), so
// that msprobe's own tools read it: every rank dir's dump.json, stack.json and
// construct.json are copied byte for byte, and its tensors, from
// dump_tensor_data.pack (format/tensor_pack.h) or dump_tensor_data/, are
// written as one file each under dump_tensor_data/. A pack entry's bytes
// are a .npy file; they become a .pt file as torch.save writes it (the
// default, ExportOptions::tensor_format: msprobe's PyTorch compare loads
// only .pt), with dump.json's data_names renamed to match, or stay the .npy
// bytes (both CRC-32s checked on the way either way). Tensor files of a
// dump_tensor_data/ directory are copied as they are. The tree below the
// path given is
// mirrored (a dump root gives step{N}/rank{R}/..., with env.json; a rank
// dir gives its files directly).
// Thread safety: a free function (it reads and writes the file system).
#ifndef LOCKSTEP_FORMAT_EXPORT_H_
#define LOCKSTEP_FORMAT_EXPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/tensor_file.h"

namespace lockstep {

struct ExportSummary {
  int64_t ranks = 0;
  int64_t packed_ranks = 0;           // of them, read from a pack
  int64_t tensors = 0;                // tensor files written
  int64_t bytes = 0;                  // their bytes
  std::vector<std::string> warnings;  // skipped ranks and files
};

struct ExportOptions {
  // The format of the files made from a pack's entries.
  TensorFileFormat tensor_format = TensorFileFormat::kPt;
};

// Exports the dump at `dump` (any path DiscoverDump accepts) into `out`,
// which must not exist (an empty directory is allowed): everything is
// written into a fresh directory beside `out` and renamed to `out` when
// complete, so a failed export leaves nothing at `out`.
// Errors: InvalidArgument when `out` exists and is not an empty directory;
// Corruption naming the pack and entry for a damaged pack (nothing is
// exported then); NotSupported for a uint16/32/64 entry exported as .pt;
// IoError from the file system; DiscoverDump's errors.
StatusOr<ExportSummary> ExportDump(const std::string& dump,
                                   const std::string& out,
                                   const ExportOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_EXPORT_H_
