// How far a recorded operator result is from its float64 replay, and how far
// it may be: the arithmetic of `lockstep replay` (docs/replay.md), without
// LibTorch.
//
// Error of one element, in ulps of the recorded dtype t:
//   e = |rec - R(ref)| / Ulp(max(|R(ref)|, scale), t)
// where ref is the float64 replay, R rounds to t (ulp.h RoundToFormat) and
// scale is what the result's size is measured against:
//   kSelf        scale = |R(ref)|: e is the ulp distance from the correctly
//                rounded value for ops computed element by element (0 for a
//                correctly rounded result, 1 for one ulp off);
//   kAbsInputs   scale = the op replayed in float64 on |inputs| (for a sum
//                of products, sum |x_i * w_i|): the size of the terms that
//                were summed, which cancellation hides from |ref|;
//   kTensorMax   scale = max |R(ref)| over the whole tensor: ops whose
//                elements are normalised against each other (softmax, norms,
//                losses), where a small element's relative error says
//                little.
// Where both rec and the scale are below the smallest normal number of t,
// e is |rec - R(ref)| over that number (at most 1): a kernel that flushes
// subnormal results to zero (GPUs' fast paths) is not a suspect.
// NaN and infinities: rec and R(ref) both NaN, or equal infinities -> 0;
// otherwise a non-finite on one side only -> +inf (counted in
// `nonfinite_mismatch`). Where the reference overflows t, R(ref) is inf and
// an inf result is exact.
//
// Bound (ReplayBound): with u_d = 2^-p the unit roundoff of t (p significand
// bits) and u_a that of the accumulation (fp32 for fp16/bf16, t otherwise):
//   elementwise   `ulps` of the op table (0 for a single IEEE rounding,
//                 4 for a transcendental function; for fp16/bf16 at most
//                 2: computed in fp32, one rounding to t, and 2 at most
//                 with an fp32 intermediate rounding);
//   accumulation  k * u_a / u_d + 1 in ulps of scale (kAbsInputs): the
//                 worst-case error of a k-term sum (Higham, gamma_k) plus
//                 the final rounding;
//   normalisation (k + 8) * u_a / u_d + 2 in ulps of the tensor's max.
// float64 results: the reference is no more precise, so the bound is doubled
// and 2 ulps added. A backward entry adds 1 ulp (the gradient's product).
// The replay takes max(this, 2 x LibTorch CPU's own error in t on the same
// inputs) so that no kernel is held to a tighter standard than LibTorch's.
//
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_REPLAY_ERROR_H_
#define LOCKSTEP_NUMERICS_REPLAY_ERROR_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "lockstep/numerics/dtype.h"

namespace lockstep {

enum class ReplayScale { kSelf, kAbsInputs, kTensorMax };

struct ReplayError {
  double max_ulp = 0;  // max e over the elements
  double max_rel = 0;  // max |rec - ref| / |ref| over ref != 0
  size_t worst = 0;    // index of the element with max_ulp
  double worst_recorded = 0;
  double worst_reference = 0;  // ref (float64) there
  size_t count = 0;
  size_t nonfinite_mismatch = 0;  // NaN/inf on one side only
};

// rec: the recorded values (values of t, widened); ref: the float64 replay;
// scale: per-element scale for kAbsInputs (ignored otherwise, may be null).
// REQUIRES: IsFloatingPoint(t).
ReplayError MeasureReplayError(const double* rec, const double* ref,
                               const double* scale, size_t n, DType t,
                               ReplayScale mode);

enum class ReplayOpKind {
  kElementwise,    // e <= ulps (per op)
  kAccumulation,   // a sum of k terms
  kNormalization,  // a reduction of k terms inside a normalisation
};

struct ReplayBound {
  double ulps = 0;
  std::string rule;  // "sum of 150 terms: 150 x 2^-24/2^-24 + 1 ulp of ..."
};

// x with 4 significant digits ("2.503e+04", "152", "nan"), as replay's
// bounds, reasons and reports print their numbers.
std::string ReplayNumber(double x);

// `elementwise_ulps` is the op table's figure for kElementwise (fp32);
// `k` >= 1 the number of terms for the other kinds.
ReplayBound ReplayErrorBound(ReplayOpKind kind, double elementwise_ulps,
                             int64_t k, DType t, bool backward);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_REPLAY_ERROR_H_
