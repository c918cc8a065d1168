// Deterministic elementary functions: natural log and sin/cos of a binary
// fraction of a turn, defined purely by IEEE 754 binary64 basic operations
// (+, -, *, /) in a fixed order, so that every conforming build and device
// gives the same bits. No libm call is made; std::log / std::sin results
// differ between libm versions and are therefore unusable for reproducible
// random streams (philox.h).
//
// Exactness requirements, checked at compile time where possible: double is
// IEEE binary64 evaluated without excess precision (FLT_EVAL_METHOD == 0),
// and no multiply-add contraction (the .cc file turns FP_CONTRACT off; any
// port, e.g. to CUDA, must use __dmul_rn/__dadd_rn or -fmad=false).
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_DET_MATH_H_
#define LOCKSTEP_NUMERICS_DET_MATH_H_

#include <cstdint>

namespace lockstep {

// Natural logarithm of x, exactly as specified here:
//   x = m * 2^e with m in [sqrt(1/2), sqrt(2)) (split from the bits; exact),
//   s = (m - 1) / (m + 1),  w = s * s,
//   p = Horner over w of the coefficients 1/25, 1/23, ..., 1/3, 1 (each a
//       double computed as 1.0 / (2k + 1)): p = ((..(c25*w + c23)*w ..)*w + 1)
//   ln(m) = 2 * s * p      (evaluated as (2 * s) * p)
//   result = (e * kLn2Lo + ln(m)) + e * kLn2Hi, with the fdlibm split of ln 2
//   (kLn2Hi has 21 trailing zero bits, so e * kLn2Hi is exact).
// Accuracy: within 4 ulp of the true value (tests sweep against std::log).
// REQUIRES: x > 0 and finite (subnormals allowed). Otherwise returns NaN
// for x < 0 or NaN, -inf for x == 0, +inf for x == +inf.
double DetLog(double x);

// sin and cos of the angle 2*pi * x / 2^32 (x is a 32-bit fraction of a
// full turn), exactly as specified here:
//   q = x >> 30 (quadrant), t = x & (2^30 - 1);
//   a = t if t <= 2^29, else 2^30 - t (the complement; sin and cos swap);
//   r = a * (pi/2 / 2^30)   (one rounding; r in [0, pi/4])
//   sin r, cos r: Taylor polynomials in r^2 by Horner (sin through r^17,
//   cos through r^18; coefficients are doubles built by the exact recursion
//   c_n = c_{n-2} / (n (n-1)) at compile time),
//   then the quadrant rotation (q = 1: (c, -s); 2: (-s, -c); 3: (-c, s)).
// Accuracy: within 2 ulp (absolute: 2^-52) of the true values.
void DetSinCosTurn(uint32_t x, double* sin_out, double* cos_out);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_DET_MATH_H_
