// Cross-framework name mappings of msprobe compare (a MindSpore dump as the
// target against a PyTorch one as the baseline; docs/msprobe_reference.md §3):
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
//  - `-am FILE` (a user's API mapping, format/api_mapping_file.h): msprobe
//    26's modify_compare_data_with_user_mapping on top of the built-in
//    names. Each row of an API an entry names (its first two fields equal
//    ms_api; the last such entry wins) is renamed to pt_api, and its
//    argument, output or parameter (the text after ".input.", ".output.",
//    ".parameters.") is looked up in the entry's MindSpore list: found at
//    i, it takes the PyTorch list's item i; not found, the row pairs with
//    nothing ("...abandoned", as msprobe). Entries whose lists differ in
//    length are skipped with a warning, and entries whose ms_api or pt_api
//    is not in the dumps are skipped, as msprobe does.
// Thread safety: pure functions; the table is immutable.
#ifndef LOCKSTEP_COMPARE_NAME_MAPPING_H_
#define LOCKSTEP_COMPARE_NAME_MAPPING_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/compare/op_rows.h"
#include "lockstep/format/api_mapping_file.h"

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

// The entries of a user's API mapping file msprobe uses: those whose
// MindSpore and PyTorch lists have equal lengths (a warning in *warnings
// for each other one).
std::vector<ApiMappingEntry> UsableApiMappings(
    std::vector<ApiMappingEntry> entries, std::vector<std::string>* warnings);

// The name each target row is matched with under `-am FILE`: its built-in
// name (MsApiMappedName), rewritten by the last of `entries` that names its
// API when that entry's ms_api has rows in `target` and its pt_api in
// `baseline`. One per row of `target`.
std::vector<std::string> UserApiMappedNames(
    const std::vector<ApiMappingEntry>& entries,
    const std::vector<OpRow>& target, const std::vector<OpRow>& baseline);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_NAME_MAPPING_H_
