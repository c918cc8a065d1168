// replay_error.h against exhaustive fp16/bf16 patterns and MPFR references.
// Tolerances: a correctly rounded result measures exactly 0 ulp and a result
// one step off exactly 1 (exhaustive over 16-bit patterns; subnormal steps
// in units of the smallest normal); against an MPFR
// reference rounded once to double, the measure may differ from the true
// one only where the double rounding meets a tie (at most 1 ulp, and in at
// most 1 of 10^4 random fp32 samples); an fp32 sum of k products stays within
// its accumulation bound against the exact MPFR sum for all tested vectors,
// cancelling ones included.
#include "lockstep/numerics/replay_error.h"

#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "lockstep/numerics/half.h"
#include "lockstep/numerics/ulp.h"

namespace lockstep {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double Measure1(double rec, double ref, DType t) {
  return MeasureReplayError(&rec, &ref, nullptr, 1, t, ReplayScale::kSelf)
      .max_ulp;
}

// Every positive finite 16-bit value below the largest: the value itself
// measures 0 ulp, its upper neighbour exactly 1.
void ExhaustiveSteps(DType t, double (*decode)(uint16_t)) {
  size_t checked = 0;
  for (uint32_t bits = 1;
       bits < 0x7c00u + (t == DType::kBFloat16 ? 0x0380u : 0); ++bits) {
    double x = decode(static_cast<uint16_t>(bits));
    if (!std::isfinite(x) || x >= FormatOf(t).max_finite) continue;
    ASSERT_EQ(Measure1(x, x, t), 0) << x;
    double up = StepUlps(x, 1, t);
    // Subnormal results are measured in units of the smallest normal.
    double min_normal = std::ldexp(1.0, FormatOf(t).min_exponent);
    double want = up < min_normal ? (up - x) / min_normal : 1;
    ASSERT_EQ(Measure1(up, x, t), want) << x;
    ASSERT_EQ(Measure1(-up, -x, t), want) << x;
    ++checked;
  }
  EXPECT_GT(checked, 30000u);
}

TEST(ReplayErrorTest, ExhaustiveHalfSteps) {
  ExhaustiveSteps(DType::kFloat16,
                  [](uint16_t h) -> double { return HalfToFloat(h); });
}

TEST(ReplayErrorTest, ExhaustiveBFloat16Steps) {
  ExhaustiveSteps(DType::kBFloat16,
                  [](uint16_t b) -> double { return BFloat16ToFloat(b); });
}

TEST(ReplayErrorTest, NonFinite) {
  double nan = std::nan("");
  EXPECT_EQ(Measure1(nan, nan, DType::kFloat32), 0);
  EXPECT_EQ(Measure1(nan, 1.0, DType::kFloat32), kInf);
  EXPECT_EQ(Measure1(1.0, nan, DType::kFloat32), kInf);
  EXPECT_EQ(Measure1(kInf, kInf, DType::kFloat32), 0);
  EXPECT_EQ(Measure1(-kInf, kInf, DType::kFloat32), kInf);
  // The reference overflows fp16: inf is the correctly rounded result.
  EXPECT_EQ(Measure1(kInf, 70000.0, DType::kFloat16), 0);
  EXPECT_EQ(Measure1(65504.0, 70000.0, DType::kFloat16), kInf);
  double rec[2] = {1.0, kInf};
  double ref[2] = {1.0, 2.0};
  ReplayError e = MeasureReplayError(rec, ref, nullptr, 2, DType::kFloat32,
                                     ReplayScale::kSelf);
  EXPECT_EQ(e.nonfinite_mismatch, 1u);
  EXPECT_EQ(e.worst, 1u);
}

// exp over random fp32 inputs: the correctly rounded fp32 result (MPFR,
// rounded once) against the MPFR value rounded to double.
TEST(ReplayErrorTest, CorrectlyRoundedAgainstMpfrIsZero) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> dist(-80.0f, 80.0f);
  mpfr_t y;
  mpfr_init2(y, 200);
  int nonzero = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) {
    float x = dist(rng);
    mpfr_set_flt(y, x, MPFR_RNDN);
    mpfr_exp(y, y, MPFR_RNDN);
    double ref = mpfr_get_d(y, MPFR_RNDN);
    double rec = mpfr_get_flt(y, MPFR_RNDN);
    double e = Measure1(rec, ref, DType::kFloat32);
    ASSERT_LE(e, 1) << x;
    nonzero += e != 0;
    // One ulp off is found.
    ASSERT_GE(Measure1(StepUlps(rec, 1, DType::kFloat32), ref, DType::kFloat32),
              e == 0 ? 1 : 0);
  }
  mpfr_clear(y);
  EXPECT_LE(nonzero, n / 10000);
}

// A naive fp32 dot product of k terms against the exact sum (MPFR), scaled
// by sum |x_i w_i|: within the accumulation bound, cancelling vectors too;
// the same dot with one input rounded to bf16 is outside it.
TEST(ReplayErrorTest, Fp32DotWithinAccumulationBound) {
  std::mt19937_64 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  mpfr_t acc, term;
  mpfr_init2(acc, 400);
  mpfr_init2(term, 400);
  int bf16_outside = 0;
  const int trials = 300;
  for (int trial = 0; trial < trials; ++trial) {
    int k = 1 + static_cast<int>(rng() % 500);
    std::vector<float> x(k), w(k);
    for (int i = 0; i < k; ++i) {
      x[i] = dist(rng);
      w[i] = dist(rng);
    }
    if (trial % 3 == 0) {  // cancel: the second half undoes the first
      for (int i = k / 2; i < k; ++i) {
        x[i] = -x[i - k / 2];
        w[i] = w[i - k / 2] * 1.0000001f;
      }
    }
    float naive = 0, naive_bf16 = 0;
    double abs_sum = 0;
    mpfr_set_zero(acc, 1);
    for (int i = 0; i < k; ++i) {
      naive += x[i] * w[i];
      naive_bf16 += BFloat16ToFloat(FloatToBFloat16(x[i])) * w[i];
      abs_sum += std::fabs(static_cast<double>(x[i]) * w[i]);
      mpfr_set_flt(term, x[i], MPFR_RNDN);
      mpfr_mul_d(term, term, w[i], MPFR_RNDN);  // exact at 400 bits
      mpfr_add(acc, acc, term, MPFR_RNDN);
    }
    double ref = mpfr_get_d(acc, MPFR_RNDN);
    double rec = naive;
    ReplayError e = MeasureReplayError(&rec, &ref, &abs_sum, 1, DType::kFloat32,
                                       ReplayScale::kAbsInputs);
    ReplayBound b = ReplayErrorBound(ReplayOpKind::kAccumulation, 0, k,
                                     DType::kFloat32, false);
    ASSERT_LE(e.max_ulp, b.ulps) << "k=" << k << " trial " << trial;
    double rec_bf16 = naive_bf16;
    ReplayError f = MeasureReplayError(
        &rec_bf16, &ref, &abs_sum, 1, DType::kFloat32, ReplayScale::kAbsInputs);
    // (the cancelling vectors round symmetrically: their error cancels too)
    if (trial % 3 != 0) bf16_outside += f.max_ulp > b.ulps;
  }
  mpfr_clear(acc);
  mpfr_clear(term);
  EXPECT_GT(bf16_outside, trials * 2 / 3 * 9 / 10);
}

TEST(ReplayErrorTest, SubnormalsFlushedToZeroAreWithinOneUnit) {
  // sigmoid(-91) = 2.7e-40, a float32 subnormal; a kernel returning 0.
  EXPECT_LE(Measure1(0.0, 2.71076984e-40, DType::kFloat32), 1);
  EXPECT_GT(Measure1(0.0, 2.71076984e-40, DType::kFloat32), 0);
  // A normal result is still measured in its own ulps.
  EXPECT_EQ(Measure1(0.0, 0x1p-120, DType::kFloat32), 0x1p23);
}

TEST(ReplayErrorTest, TensorMaxScale) {
  double ref[3] = {1000.0, 1e-3, 0.0};
  double rec[3] = {1000.0, 1e-3 + 0x1p-14, 0x1p-14};
  ReplayError self = MeasureReplayError(rec, ref, nullptr, 3, DType::kFloat32,
                                        ReplayScale::kSelf);
  ReplayError wide = MeasureReplayError(rec, ref, nullptr, 3, DType::kFloat32,
                                        ReplayScale::kTensorMax);
  EXPECT_GT(self.max_ulp, 1e6);
  // 2^-14 against ulp(1000) = 2^-14: one ulp.
  EXPECT_DOUBLE_EQ(wide.max_ulp, 1.0);
}

TEST(ReplayErrorTest, Bounds) {
  EXPECT_EQ(ReplayErrorBound(ReplayOpKind::kAccumulation, 0, 150,
                             DType::kFloat32, false)
                .ulps,
            151);
  EXPECT_NEAR(ReplayErrorBound(ReplayOpKind::kAccumulation, 0, 150,
                               DType::kBFloat16, false)
                  .ulps,
              1 + 150 * 0x1p-16, 1e-12);
  EXPECT_EQ(
      ReplayErrorBound(ReplayOpKind::kElementwise, 0, 1, DType::kFloat32, false)
          .ulps,
      0);
  EXPECT_EQ(ReplayErrorBound(ReplayOpKind::kElementwise, 4, 1, DType::kBFloat16,
                             false)
                .ulps,
            2);
  EXPECT_EQ(
      ReplayErrorBound(ReplayOpKind::kElementwise, 4, 1, DType::kFloat32, true)
          .ulps,
      5);
  EXPECT_EQ(ReplayErrorBound(ReplayOpKind::kNormalization, 0, 64,
                             DType::kFloat32, false)
                .ulps,
            74);
  EXPECT_EQ(
      ReplayErrorBound(ReplayOpKind::kElementwise, 4, 1, DType::kFloat64, false)
          .ulps,
      10);
}

}  // namespace
}  // namespace lockstep
