// ulp.h against independent definitions: the hardware double -> float
// conversion, the fp16/bf16 converters of half.h (themselves tested over all
// 65,536 patterns), std::nextafter, and MPFR for the ulp error.
#include "lockstep/numerics/ulp.h"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "lockstep/numerics/half.h"

namespace lockstep {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

double Half(uint16_t h) { return HalfToFloat(h); }
double Bf16(uint16_t b) { return BFloat16ToFloat(b); }

// Random doubles spread over all binades of fp32 (and a little beyond).
std::vector<double> RandomDoubles(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> exp(-155, 130);
  std::vector<double> v(n);
  for (double& x : v)
    x = std::ldexp(mant(rng), exp(rng)) * ((rng() & 1) ? 1 : -1);
  return v;
}

TEST(UlpTest, SpacingAtKnownValues) {
  EXPECT_EQ(Ulp(1.0, DType::kFloat32), 0x1p-23);
  EXPECT_EQ(Ulp(1.9, DType::kFloat32), 0x1p-23);
  EXPECT_EQ(Ulp(-1.0, DType::kFloat16), 0x1p-10);
  EXPECT_EQ(Ulp(1.0, DType::kBFloat16), 0x1p-7);
  EXPECT_EQ(Ulp(1.0, DType::kFloat64), 0x1p-52);
  EXPECT_EQ(Ulp(0.0, DType::kFloat32), 0x1p-149);  // smallest subnormal
  EXPECT_EQ(Ulp(-0.0, DType::kFloat16), 0x1p-24);
  EXPECT_EQ(Ulp(0x1p-140, DType::kFloat32), 0x1p-149);  // subnormal range
  EXPECT_EQ(Ulp(kInf, DType::kFloat32), 0x1p104);       // top binade
  EXPECT_EQ(Ulp(1e39, DType::kFloat32), 0x1p104);
  EXPECT_EQ(Ulp(70000.0, DType::kFloat16), 32.0);
  EXPECT_TRUE(std::isnan(Ulp(kNaN, DType::kBFloat16)));
}

TEST(UlpTest, RoundToFloat32MatchesTheHardwareConversion) {
  for (double x : RandomDoubles(200000, 1)) {
    double want = static_cast<float>(x);
    double got = RoundToFormat(x, DType::kFloat32);
    ASSERT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want))
        << "x=" << std::hexfloat << x;
  }
  // Overflow threshold: FLT_MAX + half an ulp rounds to inf (tie to even).
  double tie = FLT_MAX + 0x1p103;
  EXPECT_EQ(RoundToFormat(tie, DType::kFloat32), kInf);
  EXPECT_EQ(RoundToFormat(tie, DType::kFloat32, -1), FLT_MAX);
  EXPECT_EQ(RoundToFormat(-tie, DType::kFloat32), -kInf);
}

TEST(UlpTest, RoundTo16BitMatchesTheConvertersAtEveryMidpoint) {
  // Every pattern's value and the midpoints to its neighbour, both signs.
  for (uint32_t i = 0; i < 0x7c00; ++i) {
    double lo = Half(static_cast<uint16_t>(i)),
           hi = Half(static_cast<uint16_t>(i + 1));
    for (double x : {lo, (lo + hi) / 2, lo + (hi - lo) / 3, -(lo + hi) / 2}) {
      double want = Half(FloatToHalf(static_cast<float>(x)));
      ASSERT_EQ(RoundToFormat(x, DType::kFloat16), want) << std::hexfloat << x;
    }
  }
  for (uint32_t i = 0; i < 0x7f80; ++i) {
    double lo = Bf16(static_cast<uint16_t>(i)),
           hi = Bf16(static_cast<uint16_t>(i + 1));
    for (double x : {lo, (lo + hi) / 2, -(lo + hi) / 2}) {
      double want = Bf16(FloatToBFloat16(static_cast<float>(x)));
      ASSERT_EQ(RoundToFormat(x, DType::kBFloat16), want) << std::hexfloat << x;
    }
  }
}

TEST(UlpTest, StickyBreaksTiesTowardTheExactValue) {
  double mid_even_below = 1 + 0x1p-24;  // between 1 (even) and 1 + 2^-23
  EXPECT_EQ(RoundToFormat(mid_even_below, DType::kFloat32), 1.0);
  EXPECT_EQ(RoundToFormat(mid_even_below, DType::kFloat32, +1), 1 + 0x1p-23);
  EXPECT_EQ(RoundToFormat(mid_even_below, DType::kFloat32, -1), 1.0);
  double mid_even_above = 1 + 3 * 0x1p-24;  // between 1+2^-23 and 1+2^-22
  EXPECT_EQ(RoundToFormat(mid_even_above, DType::kFloat32), 1 + 0x1p-22);
  EXPECT_EQ(RoundToFormat(mid_even_above, DType::kFloat32, -1), 1 + 0x1p-23);
  // Not a tie: sticky changes nothing.
  EXPECT_EQ(RoundToFormat(1 + 0x1p-25, DType::kFloat32, +1), 1.0);
  EXPECT_EQ(RoundToFormat(65520.0, DType::kFloat16), kInf);
  EXPECT_EQ(RoundToFormat(65520.0, DType::kFloat16, -1), 65504.0);
}

TEST(UlpTest, RoundKeepsSignedZeroInfAndNaN) {
  EXPECT_TRUE(std::signbit(RoundToFormat(-1e-30, DType::kFloat16)));
  EXPECT_EQ(RoundToFormat(-1e-30, DType::kFloat16), 0.0);
  EXPECT_TRUE(std::signbit(RoundToFormat(-0.0, DType::kFloat32)));
  EXPECT_EQ(RoundToFormat(-kInf, DType::kBFloat16), -kInf);
  EXPECT_TRUE(std::isnan(RoundToFormat(kNaN, DType::kFloat32)));
}

TEST(UlpTest, DistanceOverAll16BitPatterns) {
  // Walking up the positive patterns is one step each; the negative half
  // mirrors it; +-inf are one step past +-max.
  struct Case {
    DType t;
    double (*value)(uint16_t);
    uint32_t inf;
  };
  for (const Case& c : {Case{DType::kFloat16, Half, 0x7c00},
                        Case{DType::kBFloat16, Bf16, 0x7f80}}) {
    for (uint32_t i = 0; i < c.inf; ++i) {
      double a = c.value(static_cast<uint16_t>(i));
      double b = c.value(static_cast<uint16_t>(i + 1));
      ASSERT_EQ(UlpDistance(a, b, c.t), 1) << i;
      ASSERT_EQ(UlpDistance(-a, b, c.t), 2 * static_cast<int64_t>(i) + 1) << i;
      ASSERT_EQ(StepUlps(a, 1, c.t), b) << i;
      ASSERT_EQ(StepUlps(-b, 1, c.t), -a) << i;
    }
    EXPECT_EQ(UlpDistance(0.0, -0.0, c.t), 0);
    EXPECT_EQ(UlpDistance(kNaN, kNaN, c.t), 0);
    EXPECT_EQ(UlpDistance(kNaN, 1.0, c.t), kUlpDistanceNaN);
    EXPECT_EQ(StepUlps(kInf, 5, c.t), kInf);  // saturates
  }
}

TEST(UlpTest, Float32DistanceAndStepsMatchNextafter) {
  for (double x : RandomDoubles(100000, 2)) {
    float f = static_cast<float>(x);
    if (std::isinf(f)) continue;
    float up = std::nextafter(f, INFINITY);
    float up3 = std::nextafter(std::nextafter(up, INFINITY), INFINITY);
    ASSERT_EQ(UlpDistance(f, up, DType::kFloat32), 1) << f;
    ASSERT_EQ(UlpDistance(up3, f, DType::kFloat32), 3) << f;
    ASSERT_EQ(StepUlps(f, 3, DType::kFloat32), up3) << f;
    ASSERT_EQ(StepUlps(up3, -3, DType::kFloat32), f) << f;
  }
  EXPECT_EQ(UlpDistance(FLT_MAX, kInf, DType::kFloat32), 1);
  EXPECT_EQ(UlpDistance(-FLT_TRUE_MIN, FLT_TRUE_MIN, DType::kFloat32), 2);
}

TEST(UlpTest, ErrorOfKnownCases) {
  EXPECT_DOUBLE_EQ(UlpError(1.0, 1 + 0.25 * 0x1p-23, DType::kFloat32), 0.25);
  EXPECT_DOUBLE_EQ(UlpError(1 + 0x1p-23, 1 + 0.25 * 0x1p-23, DType::kFloat32),
                   0.75);
  // The exact value's binade decides the unit: just below 1 it is 2^-24.
  EXPECT_DOUBLE_EQ(UlpError(1.0, 1 - 0x1p-25, DType::kFloat32), 0.5);
  EXPECT_DOUBLE_EQ(UlpError(1 - 0x1p-24, 1.0, DType::kFloat32), 0.5);
  EXPECT_DOUBLE_EQ(UlpError(-1 - 33 * 0x1p-23, -1.0, DType::kFloat32), 33.0);
  EXPECT_EQ(UlpError(kNaN, kNaN, DType::kFloat16), 0.0);
  EXPECT_EQ(UlpError(kNaN, 1.0, DType::kFloat16), kInf);
  EXPECT_EQ(UlpError(1.0, kNaN, DType::kFloat16), kInf);
  EXPECT_EQ(UlpError(kInf, 70000.0, DType::kFloat16), 0.0);  // overflows
  EXPECT_EQ(UlpError(kInf, 65504.0, DType::kFloat16), kInf);
  EXPECT_EQ(UlpError(65504.0, kInf, DType::kFloat16), kInf);
  EXPECT_EQ(UlpError(-0.0, 0.0, DType::kFloat32), 0.0);
  EXPECT_EQ(UlpError(0x1p-149, 0.0, DType::kFloat32), 1.0);
}

// The ulp error computed here from a double reference agrees with the one
// computed entirely in MPFR (200 bits) to 2^-28 ulp.
TEST(UlpTest, ErrorAgreesWithMpfrForExpOfFloats) {
  mpfr_t x, y, r;
  mpfr_inits2(200, x, y, r, static_cast<mpfr_ptr>(nullptr));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-80.0f, 80.0f);
  for (int i = 0; i < 20000; ++i) {
    float in = dist(rng);
    float result = std::exp(in);
    mpfr_set_flt(x, in, MPFR_RNDN);
    mpfr_exp(y, x, MPFR_RNDN);
    double exact = mpfr_get_d(y, MPFR_RNDN);
    // MPFR: |result - y| / ulp, ulp from the exact binade.
    double ulp = Ulp(exact, DType::kFloat32);
    mpfr_set_flt(r, result, MPFR_RNDN);
    mpfr_sub(r, r, y, MPFR_RNDN);
    mpfr_abs(r, r, MPFR_RNDN);
    mpfr_div_d(r, r, ulp, MPFR_RNDN);
    double want = mpfr_get_d(r, MPFR_RNDN);
    ASSERT_NEAR(UlpError(result, exact, DType::kFloat32), want, 0x1p-28) << in;
  }
  mpfr_clears(x, y, r, static_cast<mpfr_ptr>(nullptr));
}

}  // namespace
}  // namespace lockstep
