// The dump model: what one rank of one step of a run dumped, in the msprobe
// layout (docs/msprobe_reference.md §2). lockstep keeps each entry's JSON as a
// PyValue tree, typed as msprobe's Python would type it, so that compare can
// flatten and print it exactly as msprobe does.
//
//   {dump_path}/step{N}/rank{R}/dump.json      (or proc{pid}/)
//                               stack.json construct.json
//                               dump_tensor_data/<entry>.<io>.<i>.pt|.npy
//
// Thread safety: plain values.
#ifndef LOCKSTEP_FORMAT_DUMP_H_
#define LOCKSTEP_FORMAT_DUMP_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/format/pyvalue.h"

namespace lockstep {

// One key of dump.json's "data": an API, module or parameters_grad entry.
struct DumpEntry {
  std::string name;  // "Functional.linear.0.forward"
  PyValue value;     // the entry's dict: input_args, input_kwargs, output, ...
};

// One dump.json.
struct DumpFile {
  std::string path;       // the dump.json file
  std::string dir;        // the directory holding it (rank dir)
  std::string task;       // "tensor", "statistics", "structure", ...
  std::string level;      // "L0", "L1", "mix", ...
  std::string framework;  // "pytorch" when absent (msprobe's default)
  bool framework_given = false;
  std::string dump_data_dir;       // "" when null or absent
  std::vector<DumpEntry> entries;  // file (execution) order
  // Other top-level keys, in file order, kept so that a dump read and written
  // back loses nothing. Written after "dump_data_dir", before "data".
  std::vector<std::pair<std::string, PyValue>> extra;
};

// stack.json, either format, as entry name -> frame strings.
using StackMap = std::map<std::string, std::vector<std::string>>;
// construct.json: entry name -> parent (a PyValue: str, None or [parent, n]).
using ConstructMap = std::map<std::string, PyValue>;

// The directory where a rank's tensors live: dump_tensor_data/ beside
// dump.json.
std::string TensorDataDir(const DumpFile& dump);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_DUMP_H_
