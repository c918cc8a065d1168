// What a dump holds, per step and rank: task, level, framework, entries,
// rows, tensors, their dtypes and bytes (from dump.json's shapes), tensor
// files on disk (or the entries of a tensor pack, its index checked), and
// whether stack.json / construct.json exist.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_INSPECT_H_
#define LOCKSTEP_COMPARE_INSPECT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

struct RankSummary {
  int64_t step = -1;
  int64_t rank = 0;
  std::string dir;
  std::string task, level, framework;
  int64_t entries = 0;
  int64_t forward_entries = 0;
  int64_t backward_entries = 0;
  int64_t parameters_grad_entries = 0;  // "Module.fc.Linear.parameters_grad.0"
  int64_t other_entries = 0;            // none of the three
  int64_t rows = 0;                     // compare rows (leaves)
  int64_t tensors = 0;                  // rows with a tensor dtype
  int64_t tensor_bytes = 0;             // sum of dtype size x shape
  int64_t tensor_files = 0;  // files in dump_tensor_data/ or pack entries
  int64_t tensor_file_bytes = 0;
  bool packed = false;                    // tensors in dump_tensor_data.pack
  std::string pack_error;                 // set when that pack is unreadable
  std::map<std::string, int64_t> dtypes;  // dtype -> tensors
  bool has_stack = false, has_construct = false;
  std::string error;  // set when dump.json could not be read
};

struct DumpSummary {
  std::string root;
  std::vector<RankSummary> ranks;     // by step, then rank
  std::vector<std::string> warnings;  // unfinished ranks that were skipped
};

// Inspects the dump at `path` (any form DiscoverDump accepts). A rank whose
// dump.json is unreadable appears with `error` set.
StatusOr<DumpSummary> InspectDump(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_INSPECT_H_
