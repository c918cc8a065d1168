// Tensor mode over all rows of a rank pair: resolves each row's tensor
// (dump_tensor_data/<data_name> beside each dump.json, or the entry
// <data_name> of dump_tensor_data.pack there: format/rank_tensors.h), loads
// it (memory-mapped) and runs the fused metric pass, in parallel across rows,
// largest first, and within a tensor when there are fewer large pairs than
// threads. Peak memory stays at a few tensors: each worker holds one pair at
// a time.
// Thread safety: uses options.jobs threads internally.
#ifndef LOCKSTEP_COMPARE_TENSOR_ROWS_H_
#define LOCKSTEP_COMPARE_TENSOR_ROWS_H_

#include <string>
#include <vector>

#include "lockstep/compare/comparator.h"
#include "lockstep/compare/msprobe_row.h"
#include "lockstep/compare/tensor_compare.h"

namespace lockstep {

// Fills every row's metrics; returns the facts per row. Problems with files
// (missing, corrupt) mark that row "unsupported" with a message naming the
// file, and are also appended to `warnings` (a pack that cannot be opened:
// once for all its rows).
std::vector<TensorPairFacts> CompareTensorRows(
    const DumpFile& target, const DumpFile& baseline,
    const CompareOptions& options, std::vector<MsprobeRow>* rows,
    std::vector<std::string>* warnings);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_TENSOR_ROWS_H_
