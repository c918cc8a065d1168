// Fuzzy matching (`--fuzzy-match`, msprobe `-fm`): pairs target entries with
// baseline entries as msprobe 1.2.2 does (the last msprobe whose fuzzy match
// checks structures; reference/msprobe.md §3.3):
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
// Rows of a matched pair pair by position within inputs, outputs,
// parameters and parameter gradients.
// Where lockstep differs from msprobe 1.2.2: it keeps reading the target
// after the baseline runs out (msprobe stops and leaves the rest out of its
// table; lockstep lists them unmatched), and md5 sums are not part of the
// structure (msprobe's md5 mode leaves an entry without inputs unmatched
// when its CRC changed).
// Cost: near O(rows) with hashing on the names and structures; entries
// whose names contain both "forward" and "backward" are compared one by one.
// Thread safety: pure function.
#ifndef LOCKSTEP_COMPARE_FUZZY_MATCH_H_
#define LOCKSTEP_COMPARE_FUZZY_MATCH_H_

#include <string>
#include <vector>

#include "lockstep/compare/op_rows.h"

namespace lockstep {

// For each target row, the index of its baseline row, or -1.
// REQUIRES: the rows of one entry are consecutive (FlattenDump's order).
std::vector<int> FuzzyMatchRows(const std::vector<OpRow>& target,
                                const std::vector<OpRow>& baseline);

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
