// cos(pi * x) and sin(pi * x) with the argument given in half-turns, so that
// the points where the true value is 0 or +-1 come out exact: a double
// cannot hold pi, and cos(fl(pi)) is only within an ulp of -1 (a float32
// device kernel was 33 ulp off there; a schedule computing
// min + d * (1 + cos(pi * p)) then went below min). Here CosPi(1) == -1,
// CosPi(0.5) == 0, SinPi(1) == 0 and so on, by construction.
//
// Method: r = remainder(x, 2) in [-1, 1] is exact; |r| is folded into
// [0, 1/4] by the exact differences 1/2 - |r| and 1 - |r| (Sterbenz), and
// libm's sin or cos of pi * folded (one rounding of the product) finishes.
// A fold that lands on 0 gives sin(0) = 0 or cos(0) = 1 exactly.
//
// Accuracy: within 3 ulp of the true value (error of pi * folded, at most
// ~1.3 ulp after the fold, plus libm's < 1 ulp); tested against MPFR in
// tests/numerics/lr_schedule_mpfr_test.cc. CosPi is non-increasing on
// [0, 1] and SinPi non-decreasing on [0, 1/2] (tested on dense sweeps; the
// folds meet without a step backwards).
// NaN and +-inf give NaN. Every double of magnitude >= 2^53 is an integer,
// so CosPi gives +-1 and SinPi +-0 there, exactly.
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_COSPI_H_
#define LOCKSTEP_NUMERICS_COSPI_H_

namespace lockstep {

// cos(pi * x). Exact (+-1 or +0) at integer and half-integer x.
double CosPi(double x);

// sin(pi * x). Exact (+-1 or +-0) at integer and half-integer x; odd:
// SinPi(-x) == -SinPi(x).
double SinPi(double x);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_COSPI_H_
