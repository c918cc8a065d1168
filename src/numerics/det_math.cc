#include "lockstep/numerics/det_math.h"

#include <array>
#include <bit>
#include <cfloat>
#include <cstddef>
#include <limits>

// The results must not depend on the compiler's choice to fuse a*b+c.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

static_assert(std::numeric_limits<double>::is_iec559);
static_assert(FLT_EVAL_METHOD == 0, "det_math needs strict binary64 math");

namespace lockstep {
namespace {

// fdlibm's split of ln 2: kLn2Hi has its low 21 bits zero.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr int kLogTerms = 13;  // odd powers s^1 .. s^25

constexpr std::array<double, kLogTerms> LogCoeffs() {
  std::array<double, kLogTerms> c{};
  for (int k = 0; k < kLogTerms; ++k) c[k] = 1.0 / (2 * k + 1);
  return c;
}
constexpr std::array<double, kLogTerms> kLogC = LogCoeffs();

// Taylor coefficients (-1)^k / n! for n = first, first + 2, ...
template <int N>
constexpr std::array<double, N> TaylorCoeffs(int first) {
  std::array<double, N> c{};
  double v = 1.0;
  for (int n = 2; n <= first; ++n) v = v / n;
  for (int k = 0; k < N; ++k) {
    c[k] = v;
    int n = first + 2 * k + 2;
    v = -v / (static_cast<double>(n) * (n - 1));
  }
  return c;
}
constexpr std::array<double, 9> kSinC = TaylorCoeffs<9>(1);    // r .. r^17
constexpr std::array<double, 10> kCosC = TaylorCoeffs<10>(0);  // 1 .. r^18
// pi/2 / 2^30, rounded once to double.
constexpr double kQuarterTurnUnit = 1.5707963267948966 / 1073741824.0;

// Horner: ((c[n-1] * w + c[n-2]) * w + ...) * w + c[0].
template <size_t N>
double Horner(const std::array<double, N>& c, double w) {
  double p = c[N - 1];
  for (size_t k = N - 1; k > 0; --k) p = p * w + c[k - 1];
  return p;
}

}  // namespace

double DetLog(double x) {
  if (!(x > 0))
    return x == 0 ? -std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int e = 0;
  if (x < DBL_MIN) {  // subnormal: scale into the normal range (exact)
    x = x * 18014398509481984.0;  // 2^54
    e = -54;
  }
  uint64_t bits = std::bit_cast<uint64_t>(x);
  e += static_cast<int>(bits >> 52) - 1023;
  double m = std::bit_cast<double>((bits & 0x000fffffffffffffULL) |
                                   0x3ff0000000000000ULL);  // [1, 2)
  if (m >= 2 * kSqrtHalf) {
    m = m * 0.5;
    e += 1;
  }
  double s = (m - 1.0) / (m + 1.0);
  double ln_m = (2.0 * s) * Horner(kLogC, s * s);
  double de = static_cast<double>(e);
  return (de * kLn2Lo + ln_m) + de * kLn2Hi;
}

void DetSinCosTurn(uint32_t x, double* sin_out, double* cos_out) {
  constexpr uint32_t kQuarter = 1u << 30;
  uint32_t q = x >> 30;
  uint32_t t = x & (kQuarter - 1);
  bool swap = t > kQuarter / 2;
  uint32_t a = swap ? kQuarter - t : t;
  double r = static_cast<double>(a) * kQuarterTurnUnit;
  double w = r * r;
  double sr = r * Horner(kSinC, w);
  double cr = Horner(kCosC, w);
  double s = swap ? cr : sr;
  double c = swap ? sr : cr;
  switch (q) {
    case 0:
      *sin_out = s, *cos_out = c;
      break;
    case 1:
      *sin_out = c, *cos_out = -s;
      break;
    case 2:
      *sin_out = -s, *cos_out = -c;
      break;
    default:
      *sin_out = -c, *cos_out = s;
      break;
  }
}

}  // namespace lockstep
