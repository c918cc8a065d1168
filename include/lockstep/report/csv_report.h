// The msprobe-compatible CSV result: compare_result_<YYYYmmddHHMMSS>.csv
// with msprobe HEAD's columns and cell spelling. Several (step, rank) pairs
// give one file each, named compare_result_rank{R}_<ts>.csv (and
// step{S}_rank{R} when there are several steps), as msprobe names them.
// Files over 1,000,000 rows are split into _part_{i} like msprobe's.
// Thread safety: pure functions.
#ifndef LOCKSTEP_REPORT_CSV_REPORT_H_
#define LOCKSTEP_REPORT_CSV_REPORT_H_

#include <string>
#include <vector>

#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"

namespace lockstep {

// "20261121045412" for the current local time.
std::string CompareTimestamp();

// Writes the CSV file(s) into `dir` (which must exist) atomically; returns
// the paths written. A name an earlier run took (the same second) is never
// replaced: this run's file takes `compare_result_<ts>_2.csv`, and so on.
StatusOr<std::vector<std::string>> WriteCompareCsv(
    const CompareResult& result, const std::string& dir,
    const std::string& timestamp);

// The CSV text of the given rows (header included).
std::string RenderCompareCsv(const CompareResult& result, size_t begin,
                             size_t end);

}  // namespace lockstep

#endif  // LOCKSTEP_REPORT_CSV_REPORT_H_
