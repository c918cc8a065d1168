// lockstep's own verdict per row, and the first divergent operator.
//
// Unlike msprobe HEAD's Result column (result_rules.h), the verdict never
// drops a reason and never calls an unmatched row "pass":
//   unmatched  no baseline row matched (or the dtype gate refused it)
//   error      shape or inf/nan-position mismatch, nan/inf in the target only,
//              unreadable data, or a precision loss past the error bound
//   warning    a precision loss past the warning bound, or a dtype change
//   pass       otherwise
// Bounds (docs/compare.md), with rtol the pair's RoundingFloor (fp32:
// 2^-17 = 7.6e-6, fp16: 2^-10, bf16: 2^-7): tensor mode: error when
// cosine < 0.99 and max abs err > 0.001, or cosine < 0.9, or max abs err > 1
// (msprobe 8.3.3's "Accuracy Reached" rule), or the data is unreadable;
// warning when ‖a−b‖/‖b‖ > rtol. Statistics mode: the largest of |Δmax|,
// |Δmin|, |Δmean| relative to max(|bench max|, |bench min|) and |Δnorm|
// relative to |bench norm|: warning above rtol, error above 10·rtol.
// MD5 mode: a different CRC-32 is an error.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_VERDICT_H_
#define LOCKSTEP_COMPARE_VERDICT_H_

#include <limits>
#include <string>
#include <string_view>
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

// The rounding floor of a pair of dtypes: relative errors at or below it are
// rounding noise. 2 u of the less precise dtype (two kernels each rounding
// once) for 16- and 8-bit floats, 128 u for fp32 and fp64 (accumulation over
// ~16k terms with sqrt(n) growth); 0 for integers, bool and strings.
double RoundingFloor(const std::string& dtype_a, const std::string& dtype_b);

// A dtype name across frameworks: "torch.bfloat16" and MindSpore's
// "BFloat16" both give "bfloat16" ("Float32" -> "float32", "Int64" ->
// "int64"); other names lower-cased.
std::string NormalizedDtype(std::string_view dtype);
// Whether two dtype names are one dtype (NormalizedDtype).
bool SameDtype(std::string_view a, std::string_view b);

// A row's error estimate for the first-divergence rule (see
// CompareRow::error); NaN and floor 0 when the row is unmatched.
struct RowError {
  double error = std::numeric_limits<double>::quiet_NaN();
  double floor = 0;
  double aggregate_error = std::numeric_limits<double>::quiet_NaN();  // as
  // CompareRow's
};
RowError EstimateRowError(CompareMode mode, const MsprobeRow& row,
                          const TensorPairFacts* facts);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_VERDICT_H_
