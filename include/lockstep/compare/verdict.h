// lockstep's own verdict per row, and the first divergent operator.
//
// Unlike msprobe HEAD's Result column (result_rules.h), the verdict never
// drops a reason and never calls an unmatched row "pass":
//   unmatched  no baseline row matched (or the dtype gate refused it)
//   error      shape or inf/nan-position mismatch, nan/inf in the target only,
//              unreadable data, or a precision loss past the error bound
//   warning    a precision loss past the warning bound, or a dtype change
//   pass       otherwise
// Bounds (docs/compare.md), with rtol by the least precise dtype of the pair
// (fp32/fp64: 1e-5, fp16: 1e-3, bf16: 8e-3): tensor mode: error when
// cosine < 0.99 and max abs err > 0.001, or cosine < 0.9, or max abs err > 1
// (msprobe 8.3.3's "Accuracy Reached" rule), or the data is unreadable;
// warning when ‖a−b‖/‖b‖ > rtol. Statistics mode: the largest of |Δmax|,
// |Δmin|, |Δmean| relative to max(|bench max|, |bench min|) and |Δnorm|
// relative to |bench norm|: warning above rtol, error above 10·rtol.
// MD5 mode: a different CRC-32 is an error.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_VERDICT_H_
#define LOCKSTEP_COMPARE_VERDICT_H_

#include <vector>

#include "lockstep/compare/msprobe_row.h"
#include "lockstep/compare/result.h"
#include "lockstep/compare/tensor_compare.h"

namespace lockstep {

struct RowVerdict {
  Verdict verdict = Verdict::kPass;
  DivergenceReason reason = DivergenceReason::kNone;
  std::vector<std::string> messages;
};

// The verdict of one row. `facts` is used in tensor mode (may be null).
RowVerdict JudgeRow(CompareMode mode, const MsprobeRow& row,
                    const TensorPairFacts* facts);

// The first entry, in execution order within each (step, rank), whose input
// rows all pass and some output row does not; ties across ranks go to the
// lowest rank. If every diverging entry already had diverging inputs, the
// earliest non-pass row is reported with that said in `detail`.
FirstDivergence FindFirstDivergence(const std::vector<CompareRow>& rows);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_VERDICT_H_
