// DetLog and DetSinCosTurn against libm over sweeps, with ulp bounds.
#include "lockstep/numerics/det_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace lockstep {
namespace {

// Distance in ulps between two finite doubles of the same sign.
int64_t UlpDiff(double a, double b) {
  int64_t ia = std::bit_cast<int64_t>(a), ib = std::bit_cast<int64_t>(b);
  return ia > ib ? ia - ib : ib - ia;
}

// libm's log is within 1 ulp; ours within 3, so they differ by at most 4.
constexpr int64_t kLogUlps = 4;

TEST(DetLogTest, SweepAgainstStdLog) {
  int64_t worst = 0;
  double worst_x = 0;
  uint64_t state = 12345;
  for (int i = 0; i < 2000000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    // Positive doubles across the whole exponent range, subnormals included.
    double x = std::bit_cast<double>((state >> 2) % 0x7ff0000000000000ULL + 1);
    double want = std::log(x);
    int64_t d = UlpDiff(DetLog(x), want);
    if (d > worst) worst = d, worst_x = x;
  }
  EXPECT_LE(worst, kLogUlps) << "at x = " << worst_x;
}

TEST(DetLogTest, SweepNearOneAndUnitInterval) {
  // Box-Muller's inputs (a + 0.5) * 2^-32 and the hard region around 1.
  for (uint64_t a = 0; a < (1ull << 32); a += 65537) {
    double u = (static_cast<double>(a) + 0.5) * 0x1p-32;
    ASSERT_LE(UlpDiff(DetLog(u), std::log(u)), kLogUlps) << "u = " << u;
  }
  for (int k = -100000; k <= 100000; ++k) {
    double x = 1.0 + k * 0x1p-40;
    if (x == 1.0) continue;
    ASSERT_LE(UlpDiff(DetLog(x), std::log(x)), kLogUlps) << "x = " << x;
  }
}

TEST(DetLogTest, Specials) {
  EXPECT_EQ(DetLog(1.0), 0.0);
  EXPECT_EQ(DetLog(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(DetLog(-1.0)));
  EXPECT_TRUE(std::isnan(DetLog(std::numeric_limits<double>::quiet_NaN())));
  EXPECT_EQ(DetLog(std::numeric_limits<double>::infinity()),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(DetLog(2.0), 0.6931471805599453);
}

TEST(DetSinCosTest, SweepAgainstStd) {
  // Absolute error bound 2^-51 (a few ulp of 1) vs libm of the same angle.
  constexpr double kTol = 0x1p-51;
  double worst = 0;
  uint32_t worst_x = 0;
  for (uint64_t x = 0; x < (1ull << 32); x += 4099) {
    double s, c;
    DetSinCosTurn(static_cast<uint32_t>(x), &s, &c);
    // The angle in long double keeps libm's reference accurate enough.
    long double ang = 6.283185307179586476925286766559L *
                      static_cast<long double>(x) / 4294967296.0L;
    double es = std::fabs(s - static_cast<double>(std::sin(ang)));
    double ec = std::fabs(c - static_cast<double>(std::cos(ang)));
    double e = es > ec ? es : ec;
    if (e > worst) worst = e, worst_x = static_cast<uint32_t>(x);
  }
  EXPECT_LE(worst, kTol) << "at x = " << worst_x;
}

TEST(DetSinCosTest, ExactPoints) {
  double s, c;
  DetSinCosTurn(0, &s, &c);
  EXPECT_EQ(s, 0.0);
  EXPECT_EQ(c, 1.0);
  DetSinCosTurn(1u << 30, &s, &c);  // quarter turn
  EXPECT_EQ(s, 1.0);
  EXPECT_EQ(c, -0.0);
  DetSinCosTurn(1u << 31, &s, &c);  // half turn
  EXPECT_EQ(s, -0.0);
  EXPECT_EQ(c, -1.0);
}

}  // namespace
}  // namespace lockstep
