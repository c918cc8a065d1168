// Comparing two checkpoints (format/checkpoint.h: torch.save state_dicts
// and training checkpoints, safetensors files, shard directories) parameter
// by parameter, with the metrics, verdicts and reports of a tensor-mode dump
// compare: one row per name of the target, matched by name with the
// baseline (names in the target only are unmatched rows, names in the
// baseline only are gaps that fail the compare); shapes and dtypes that
// differ are reported per row; non-tensor values (an epoch, a learning
// rate, a list of floats) are rows too, an error when they differ. The
// statistics columns (max, min, mean, L2 norm) are computed from the
// tensors. There is no first divergence (a checkpoint has no order): the
// result lists the rows with the largest errors instead.
// Thread safety: thread-compatible; uses options.jobs threads inside.
#ifndef LOCKSTEP_COMPARE_CHECKPOINT_COMPARE_H_
#define LOCKSTEP_COMPARE_CHECKPOINT_COMPARE_H_

#include <string>
#include <vector>

#include "lockstep/compare/comparator.h"
#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"
#include "lockstep/format/checkpoint.h"

namespace lockstep {

// How many rows CompareResult::largest_errors holds at most.
inline constexpr size_t kLargestErrors = 10;

// Compares checkpoint `target` against `baseline` (files or shard
// directories; the formats may differ). Options used: jobs, progress.
// The result's subject is kCheckpoints and its mode kTensor; its summary
// and largest errors are not made yet (FinishResult makes them).
// Errors: those of ReadCheckpoint, naming the file; InvalidArgument when a
// checkpoint holds nothing.
StatusOr<CompareResult> CompareCheckpointRows(const std::string& target,
                                              const std::string& baseline,
                                              const CompareOptions& options);

// CompareCheckpointRows, then FinishResult.
StatusOr<CompareResult> CompareCheckpointPaths(const std::string& target,
                                               const std::string& baseline,
                                               const CompareOptions& options);

// As CompareCheckpointRows, for checkpoints already read.
StatusOr<CompareResult> CompareCheckpoints(const Checkpoint& target,
                                           const Checkpoint& baseline,
                                           const CompareOptions& options);

// Up to `n` rows of `result`, worst first: those that do not pass, by
// verdict (error, then unmatched, then warning) and then by their error
// estimate (CompareRow::error, largest first; NaN last); then passing rows
// whose error is above 0, largest first.
std::vector<size_t> LargestErrors(const CompareResult& result, size_t n);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_CHECKPOINT_COMPARE_H_
