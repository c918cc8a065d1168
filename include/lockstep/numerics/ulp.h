// Units in the last place (ulp) of the binary floating-point formats lockstep
// audits: fp16, bf16, fp32 (and fp64): the spacing at a value, rounding of a
// double into a format, the ulp error of a result against an exact value,
// and the ulp distance (number of representable steps) between two values.
//
// Conventions (those of Muller's "ulp(x)" as used by glibc, CORE-MATH and
// Highway): ulp(x) = 2^(max(floor(log2|x|), emin) - p + 1) for a format with
// p significand bits (the implicit bit included) and smallest normal exponent
// emin. A correctly rounded result has ulp error <= 0.5.
//
// Values are passed as doubles; every fp16/bf16/fp32 value is exactly a
// double. An "exact" reference is the true value rounded to double (e.g. an
// MPFR result with MPFR_RNDN): against it an fp32 ulp error is accurate to
// 2^-29 ulp, an fp16/bf16 one to better than 2^-40 ulp.
//
// NaN, infinities and zeros, per function below. -0 and +0 are the same
// value everywhere here (distance 0, error 0); callers that care about the
// sign of zero compare std::signbit themselves.
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_ULP_H_
#define LOCKSTEP_NUMERICS_ULP_H_

#include <cstdint>
#include <limits>

#include "lockstep/numerics/dtype.h"

namespace lockstep {

// The parameters of a binary format.
struct FloatFormat {
  int precision;     // p: significand bits including the implicit one
  int min_exponent;  // emin: exponent of the smallest normal (fp32: -126)
  int max_exponent;  // emax: exponent of the largest finite (fp32: 127)
  double max_finite;
};

// REQUIRES: IsFloatingPoint(t) (fp16, bf16, fp32, fp64).
FloatFormat FormatOf(DType t);

// Spacing of format t at x: 2^(clamp(floor(log2|x|), emin, emax) - p + 1).
// x == +-0 gives the smallest subnormal; |x| above the largest finite value
// and +-inf give the spacing of the top binade; NaN gives NaN.
double Ulp(double x, DType t);

// x rounded to the nearest value of format t, ties to even, as IEEE 754
// narrowing does: results beyond the largest finite value become +-inf
// (|x| >= max + ulp(max)/2), tiny ones become subnormals or +-0 with x's
// sign; +-inf, NaN and +-0 are returned as they are.
// `sticky` tells where the exact value lies when x itself is a rounding of it
// (e.g. an MPFR result rounded to double): > 0 above x, < 0 below, 0 exactly
// x. It only matters when x is exactly halfway between two values of t, where
// it breaks the tie toward the exact value (avoiding double rounding).
double RoundToFormat(double x, DType t, int sticky = 0);

// Ulp error of `result` (a value of format t) against the exact value
// `exact`: |result - exact| / Ulp(exact, t).
//   both NaN -> 0; exactly one NaN -> +inf;
//   result or exact infinite -> 0 if result == RoundToFormat(exact, t) (e.g.
//   the true value overflows the format and result is that inf), else +inf;
//   -0 vs +0 -> 0.
double UlpError(double result, double exact, DType t);

// Number of representable steps of format t between a and b (both values of
// t): 0 when equal (also -0 vs +0), 1 for neighbours; +-inf count as one step
// beyond +-max. Both NaN -> 0; exactly one NaN -> kUlpDistanceNaN.
// REQUIRES: a and b are values of t (RoundToFormat(v, t) == v) or NaN.
inline constexpr int64_t kUlpDistanceNaN = std::numeric_limits<int64_t>::max();
int64_t UlpDistance(double a, double b, DType t);

// The value `steps` representable steps above x in format t (below for
// negative steps), saturating at +-inf; NaN stays NaN. Used to build
// results that are off by a known number of ulps.
// REQUIRES: x is a value of t.
double StepUlps(double x, int64_t steps, DType t);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_ULP_H_
