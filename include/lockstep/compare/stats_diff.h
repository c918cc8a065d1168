// Statistics ("summary") mode of msprobe HEAD (docs/msprobe_reference.md §3.6):
// for Max, Min, Mean and Norm, the difference target − baseline and the
// relative error |diff / baseline| · 100 as a percent string, with msprobe's
// rules for equal strings, NaN, ±inf, N/A and non-numeric values.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_STATS_DIFF_H_
#define LOCKSTEP_COMPARE_STATS_DIFF_H_

#include <utility>

#include "lockstep/compare/msprobe_row.h"

namespace lockstep {

// The (diff, relative error) cells for one statistic. `bench` is nullptr for
// an unmatched row. Numbers are subtracted as doubles (msprobe re-parses them
// with pandas, whose parser may be 1 ulp off: see docs/compare.md).
std::pair<Cell, Cell> StatDiff(const PyValue& npu, const PyValue* bench);

// Fills row->stat_diffs from the two rows' Max/Min/Mean/Norm.
void ComputeStatDiffs(MsprobeRow* row);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_STATS_DIFF_H_
