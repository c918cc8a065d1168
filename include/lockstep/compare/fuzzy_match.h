// Fuzzy matching (`--fuzzy-match`, msprobe `-fm`): pairs target rows with
// baseline rows whose names agree once the call index is removed. Two rules
// (docs/msprobe_reference.md §3.3):
//
// FuzzyRule::kMsprobe, the default: as msprobe 26 and HEAD do (acc_compare.py
// process_fuzzy_match), row by row:
//  - rows are read from both dumps in step, one each, into two queues; the
//    newest target row is looked up in the baseline queue (first match in
//    queue order), then the newest baseline row in the target queue; the
//    first match pairs the two rows, leaves the target rows queued before it
//    unpaired and drops both queues' prefixes;
//  - names agree when msprobe's rename_api gives the same text (the call
//    index removed, "forward"/"backward" kept); shapes are not looked at;
//  - reading stops when one queue is empty and the other is not (the rest
//    of the target stays unpaired);
//  - afterwards a pair whose dtypes are not comparable (the dtype gate of
//    matching.h) is cut: the target row stays unpaired.
// msprobe 26.2 writes this table in md5 and tensor mode. In plain
// statistics mode its table loses a column (data_name) and shows every row
// unpaired, or it stops with a pandas "Length mismatch": lockstep pairs
// statistics rows by the same rule.
//
// FuzzyRule::kStructures (`--fuzzy-match=1.2.2`): as msprobe 1.2.2 does, the
// last msprobe whose fuzzy match checks structures, entry by entry:
//  - two entries match when their row names agree with the call index
//    removed (msprobe's rename_api) and their structures agree: the
//    (dtype, shape) lists of inputs, outputs, parameters and parameter
//    gradients are equal, or have equal lengths, equal shapes and dtypes
//    that are equal or both float16/float32/bfloat16 (then the inputs must
//    not be empty);
//  - entries are read from both dumps in step, one each, into two queues;
//    the newest target entry is tried against the baseline queue in order,
//    then the newest baseline entry against the target queue; a match
//    leaves the target entries queued before it unmatched and drops both
//    queues' prefixes. An inserted call of the same API with other shapes
//    stays unmatched, and the calls around it pair as they should.
//  Rows of a matched pair pair by position within inputs, outputs,
//  parameters and parameter gradients. Where lockstep differs from msprobe
//  1.2.2: it keeps reading the target after the baseline runs out (msprobe
//  stops and leaves the rest out of its table; lockstep lists them
//  unmatched), and md5 sums are not part of the structure (msprobe's md5
//  mode leaves an entry without inputs unmatched when its CRC changed).
//
// Cost: near O(rows) with hashing on the names (and structures); kStructures
// compares entries whose names contain both "forward" and "backward" one by
// one.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_FUZZY_MATCH_H_
#define LOCKSTEP_COMPARE_FUZZY_MATCH_H_

#include <string>
#include <vector>

#include "lockstep/compare/op_rows.h"

namespace lockstep {

enum class FuzzyRule {
  kMsprobe,     // msprobe 26 / HEAD: rows by name alone
  kStructures,  // msprobe 1.2.2: entries by name and structure
};

// For each target row, the index of its baseline row, or -1.
// REQUIRES: the rows of one entry are consecutive (FlattenDump's order).
std::vector<int> FuzzyMatchRows(const std::vector<OpRow>& target,
                                const std::vector<OpRow>& baseline,
                                FuzzyRule rule = FuzzyRule::kMsprobe);

// msprobe 26's rename_api: "forward" if the name holds it, else "backward"
// if it holds that, else the name unchanged; then the two dot-separated
// fields before the first occurrence dropped, the word kept, and the text
// after it up to a second occurrence:
// "Tensor.__mul__.3.forward.input.0" -> "Tensor.__mul__.forward.input.0".
std::string MsprobeHeadRenameApi(const std::string& name);

// msprobe's rename_api(name, process): the two dot-separated fields before
// the first `process` ("forward"/"backward") dropped, and the text after it
// kept up to a second occurrence:
// "Functional.conv2d.3.forward.input.0" -> "Functional.conv2d.input.0",
// "Module.fc.Linear.forward.0.input.0" -> "Module.fc.0.input.0".
std::string MsprobeRenameApi(const std::string& name,
                             const std::string& process);

// msprobe's fuzzy_check_name: rename_api with "forward" when both names
// contain it, else with "backward" when both contain it, else equality.
bool FuzzyNamesMatch(const std::string& a, const std::string& b);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_FUZZY_MATCH_H_
