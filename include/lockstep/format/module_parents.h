// The module structure of a dump: construct.json's parent links
// (docs/msprobe_reference.md §2.6) read leniently, and the module named by a
// Module.* entry (§2.2). A construct.json only helps to show a report, so a
// value it cannot use is skipped and said, never fatal.
// Thread safety: pure functions.
#ifndef LOCKSTEP_FORMAT_MODULE_PARENTS_H_
#define LOCKSTEP_FORMAT_MODULE_PARENTS_H_

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/dump.h"

namespace lockstep {

// construct.json as entry name -> parent name ("" for null).
struct ModuleParents {
  std::unordered_map<std::string, std::string> parent;
  // Module.* keys in name order (container modules that dump.json may not
  // hold: msprobe records Sequential and Bottleneck parents only here).
  std::vector<std::string> modules;
  // One line per value that was skipped: "construct.json: entry 'x':
  // parent is an int, expected a str, null or [parent, micro_step]".
  std::vector<std::string> problems;
};

// Takes each value of `map`: a str is the parent, null none, a list whose
// first item is a str (Megatron's [parent, micro_step]) that str; anything
// else is skipped with a line in `problems`. "megatron_micro_step_number"
// (an int) is not an entry and is left out silently. `path` names the file
// in the problems.
ModuleParents ModuleParentsFrom(const ConstructMap& map,
                                const std::string& path);

// Reads construct.json at `path` (ReadConstructJson) and takes it as above.
// Errors: NotFound / IoError for the file, Corruption when it is not a
// JSON object; callers that only show the structure turn them into
// warnings.
StatusOr<ModuleParents> ReadModuleParents(const std::string& path);

// The module that a Module.* (or MindSpore Cell.*) entry belongs to:
//   "Module.layer1.0.conv1.Conv2d.forward.0" -> {"layer1.0.conv1", "Conv2d"}
//   "Module.fc.Linear.parameters_grad.0"     -> {"fc", "Linear"}
//   "Module.Net.forward.0"                   -> {"Net", "Net"} (the root)
// nullopt for other entries and for names without a forward / backward /
// parameters_grad part after the class.
struct ModuleName {
  std::string path;
  std::string cls;
};
std::optional<ModuleName> ModuleOfEntry(std::string_view entry);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_MODULE_PARENTS_H_
