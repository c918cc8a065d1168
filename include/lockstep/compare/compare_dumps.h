// The whole compare of two dump paths: discovery (dump.json, rank, step or
// root), step/rank pairing, reading, mode detection, per-rank comparison and
// the summary with the first divergence. What `lockstep compare` runs.
// Thread safety: thread-compatible; uses options.jobs threads inside.
#ifndef LOCKSTEP_COMPARE_COMPARE_DUMPS_H_
#define LOCKSTEP_COMPARE_COMPARE_DUMPS_H_

#include <string>

#include "lockstep/compare/comparator.h"
#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"

namespace lockstep {

// Compares `target` against `baseline`. A rank whose dump.json cannot be read
// is skipped with a warning in result.warnings; when no rank can be read the
// call fails (Corruption or NotFound naming the files). Tensor files are read
// with options.load_tensor, or ReadTensorFile when it is empty.
// The stack column comes from the target's stack.json, or the baseline's when
// the target has none.
StatusOr<CompareResult> CompareDumpPaths(const std::string& target,
                                         const std::string& baseline,
                                         const CompareOptions& options);

// CompareDumpPaths without its last step: the rows, columns, warnings and
// gaps are made, the summary and first divergence are not; FinishResult
// (comparator.h) makes them. Writers that read only the rows and columns
// (the CSV, the HTML table file) may start on other threads meanwhile.
StatusOr<CompareResult> CompareDumpRows(const std::string& target,
                                        const std::string& baseline,
                                        const CompareOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_COMPARE_DUMPS_H_
