// What the first-divergence walk (first_divergence.cc) reads from entry
// names and rows, and how it words them (first_divergence_rows.cc).
// Private to the compare layer.
// Thread safety: pure functions.
#ifndef LOCKSTEP_SRC_COMPARE_FIRST_DIVERGENCE_INTERNAL_H_
#define LOCKSTEP_SRC_COMPARE_FIRST_DIVERGENCE_INTERNAL_H_

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/compare/result.h"

namespace lockstep::divergence_detail {

// Whether an error is known (not NaN).
inline bool Known(double e) { return !std::isnan(e); }

// "%.3g" of `x`.
std::string Fmt(double x);

// "argument `approximate`" / "argument 1" for an input row of `entry`.
std::string ArgumentName(const CompareRow& r);

// An in-place call ("Tensor.add_.0.forward", "Torch._foreach_addcdiv_.1.
// forward", "Tensor.__iadd__.0.forward"): it writes a tensor without
// recording the written tensor as an output.
bool InPlace(std::string_view entry);

// Ops whose output error no bound on the inputs' norm-wise error limits.
// They are named only when their inputs are equal.
// - A quotient's elements amplify their operands' elementwise relative
//   error by up to 1/|divisor|, which the norm of the divisor's error does
//   not see (Adam's m / (sqrt(v) + eps) turns noise in a near-zero
//   gradient into a whole step).
// - A sum over some dimensions: relative to its own scale, its error grows
//   with the ratio of its inputs' scale to the sums' (cancellation, or rows
//   whose largest element is many times their mean, as the squares in an
//   RMSNorm's `x.pow(2).mean(-1)`), which the inputs' statistics do not
//   give.
bool UnboundedAmplifier(const std::string& entry);

// The forward entry of a backward entry ("X.3.backward" -> "X.3.forward",
// "Module.a.Linear.backward.0" -> "Module.a.Linear.forward.0"), or "".
std::string ForwardOf(const std::string& entry);

// Two sides' statistics of one tensor: max and min exactly (reductions in
// any order agree), mean and norm within a relative 1e-6 (they need not).
bool SameStats(const std::array<double, 4>& a, const std::array<double, 4>& b);

// A hash of a side's statistics (its max and min) for SameStats lookups.
uint64_t StatsKey(const std::array<double, 4>& s);

// Whether a tensor input differs at all, for runs identical up to it:
// any element in tensor mode (error > 0); in statistics mode, beyond
// what summing in another order gives (SameStats), so that two devices'
// statistics of the same values are not a difference.
bool DiffersAtAll(const CompareRow& r);

// The "dtype A vs B" message of a row whose two sides' dtypes differ
// (verdict.cc), or "".
std::string_view DtypeMessage(const CompareRow& r);

// The input's name after ".input." ("0", "0.1"), "parameter x" after
// ".parameters.", or the row's whole name.
std::string InputName(const CompareRow& r);

// " (500000 vs 10000)" for a tensor of one value on each side (a
// Python number made a tensor, as `500000.0 ** x` does), or "".
std::string OneValueEach(const CompareRow& r);

// A non-tensor row's "value ..." message without its prefix ("True vs
// False"), or "error <its error>".
std::string TargetVsBaseline(const CompareRow& r);

// The row's messages joined by "; ".
std::string JoinMessages(const CompareRow& r);

}  // namespace lockstep::divergence_detail

#endif  // LOCKSTEP_SRC_COMPARE_FIRST_DIVERGENCE_INTERNAL_H_
