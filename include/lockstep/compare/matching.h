// Matching target ("NPU") rows to baseline ("bench") rows, as msprobe HEAD
// does (docs/msprobe_reference.md §3.3):
//  - exact: by row name, with the call index of backward API entries
//    renumbered to their occurrence order (robust to recomputation);
//  - the dtype gate: dtypes that differ and are not both float16/float32/
//    bfloat16 (torch or MindSpore spelling) make the row unmatched;
//  - fuzzy: msprobe -fm, see fuzzy_match.h.
// lockstep's --align mode (align.h) is separate.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_MATCHING_H_
#define LOCKSTEP_COMPARE_MATCHING_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "lockstep/compare/fuzzy_match.h"
#include "lockstep/compare/op_rows.h"

namespace lockstep {

struct MatchOptions {
  bool fuzzy = false;
  FuzzyRule fuzzy_rule = FuzzyRule::kMsprobe;
  // Also renumber parameters_grad indices by occurrence (msprobe does not;
  // without it step N of one run and step M != N of another leave them
  // unmatched).
  bool renumber_params_grad = false;
  // msprobe's -dm data_mapping: target row name -> the baseline row name it
  // is compared with (the first baseline row of that key, which other
  // target rows may be compared with too, as msprobe's merge does); rows
  // not in it match as usual. With a mapping the dtype gate is off (as
  // msprobe).
  const std::unordered_map<std::string, std::string>* data_mapping = nullptr;
};

// For each target row, the index of its baseline row, or -1. A baseline row
// is used at most once (except by data_mapping's rows).
std::vector<int> MatchRows(const std::vector<OpRow>& target,
                           const std::vector<OpRow>& baseline,
                           const MatchOptions& options);

// msprobe HEAD's Match.rename_api: the call index removed,
// "Functional.conv2d.3.forward.input.0" -> "Functional.conv2d.forward.input.0"
// (alignment's signature; fuzzy matching uses msprobe 1.2.2's rename).
std::string FuzzyName(const std::string& row_name);

// True when msprobe's dtype gate lets the two dtypes be compared.
bool DTypesComparable(const std::string& target_dtype,
                      const std::string& baseline_dtype);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_MATCHING_H_
