// Cross-framework name mappings of msprobe compare (a MindSpore dump as the
// target against a PyTorch one as the baseline; reference/msprobe.md §3):
// the key a target row is matched on, in place of its name.
//  - `-am` (API mapping, without a file): msprobe 26's
//    process_internal_api_mapping. "Mint" in a name becomes "Torch",
//    "MintFunctional" becomes "Functional" (every occurrence, as Python's
//    str.replace), and otherwise the API ("Functional.add", the first two
//    dot-separated fields) is looked up in msprobe's ms_to_pt_api table
//    (399 names, e.g. Functional.add -> Torch.add) and replaced.
//  - `-cm FILE` (cell mapping): msprobe 26's process_cell_mapping. Only rows
//    of forward/backward calls and parameter gradients take part (others
//    get no key); the first "Cell" becomes "Module"; the cell path
//    ("fc2.Dense" in "Cell.fc2.Dense.forward.0.input.0") is replaced by its
//    value in the file when the file names it whole, else each key of the
//    file found in it is replaced by its value, in file order.
// Thread safety: pure functions; the table is immutable.
#ifndef LOCKSTEP_COMPARE_NAME_MAPPING_H_
#define LOCKSTEP_COMPARE_NAME_MAPPING_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {

// The PyTorch name msprobe's `-am` compares a MindSpore row name with.
std::string MsApiMappedName(const std::string& name);

// msprobe's cell mapping file: {"cell_name.Class": "module_name.Class"}, in
// file order.
using CellMapping = std::vector<std::pair<std::string, std::string>>;

// The PyTorch name msprobe's `-cm` compares a MindSpore row name with, or
// nullopt for a row msprobe leaves unmatched ("N/A").
std::optional<std::string> CellMappedName(const std::string& name,
                                          const CellMapping& mapping);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_NAME_MAPPING_H_
