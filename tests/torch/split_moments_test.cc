// SplitMoments: the same statistics with and without a helper thread, the
// chunked merge in order, against a double reference, over many jobs in a
// row (the hand-off between the two threads) and jobs of every size class.
#include "torch/split_moments.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace lockstep {
namespace {

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void ExpectIdentical(const TensorStats& a, const TensorStats& b) {
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.finite, b.finite);
  EXPECT_EQ(a.nan, b.nan);
  EXPECT_EQ(a.pos_inf, b.pos_inf);
  EXPECT_EQ(a.neg_inf, b.neg_inf);
  EXPECT_TRUE(SameBits(a.min, b.min)) << a.min << " " << b.min;
  EXPECT_TRUE(SameBits(a.max, b.max)) << a.max << " " << b.max;
  EXPECT_TRUE(SameBits(a.sum, b.sum)) << a.sum << " " << b.sum;
  EXPECT_TRUE(SameBits(a.sum_sq, b.sum_sq)) << a.sum_sq << " " << b.sum_sq;
}

// The chunks' moments merged in order, on this thread: what Compute must
// give whoever sums which chunk.
TensorStats ChunkedReference(const std::vector<float>& x, size_t n) {
  if (n < SplitMoments::kChunk) {
    return ComputeTensorMoments(DType::kFloat32, x.data(), n);
  }
  TensorStats total;
  for (size_t b = 0; b < n; b += SplitMoments::kChunk) {
    MergeTensorStats(
        ComputeTensorMoments(DType::kFloat32, x.data() + b,
                             std::min(SplitMoments::kChunk, n - b)),
        &total);
  }
  return total;
}

std::vector<float> Values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.5f, 3.0f);
  std::vector<float> x(n);
  for (float& v : x) v = dist(rng);
  return x;
}

TEST(SplitMomentsTest, HelperGivesTheChunkedResultBitForBit) {
  const size_t k = SplitMoments::kChunk;
  const size_t sizes[] = {0,     1,     7,         k - 1,      k,
                          k + 1, 2 * k, 5 * k + 3, 64 * k + 11};
  SplitMoments with(true), without(false);
  for (size_t n : sizes) {
    SCOPED_TRACE(n);
    std::vector<float> x = Values(n, static_cast<uint32_t>(n));
    TensorStats ref = ChunkedReference(x, n);
    // Many jobs in a row: the helper takes chunks of some of them, which
    // must not change a bit.
    for (int rep = 0; rep < 50; ++rep) {
      ExpectIdentical(with.Compute(DType::kFloat32, x.data(), n), ref);
    }
    ExpectIdentical(without.Compute(DType::kFloat32, x.data(), n), ref);
  }
  EXPECT_FALSE(without.helper_started());
}

TEST(SplitMomentsTest, MatchesADoubleReferenceWithNonFiniteValues) {
  const size_t n = 9 * SplitMoments::kChunk + 5;
  std::vector<float> x = Values(n, 7);
  x[3] = std::numeric_limits<float>::infinity();
  x[4 * SplitMoments::kChunk] = -std::numeric_limits<float>::infinity();
  x[n - 1] = std::numeric_limits<float>::quiet_NaN();
  SplitMoments m(true);
  TensorStats s = m.Compute(DType::kFloat32, x.data(), n);
  double sum = 0, sq = 0, mn = INFINITY, mx = -INFINITY;
  for (float v : x) {
    if (!std::isfinite(v)) continue;
    sum += v;
    sq += double{v} * v;
    mn = std::min<double>(mn, v);
    mx = std::max<double>(mx, v);
  }
  EXPECT_EQ(s.n, static_cast<int64_t>(n));
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.pos_inf, 1);
  EXPECT_EQ(s.neg_inf, 1);
  EXPECT_EQ(s.finite, static_cast<int64_t>(n) - 3);
  EXPECT_EQ(s.min, mn);
  EXPECT_EQ(s.max, mx);
  // Both are double sums of the same exactly converted values in different
  // orders: each within n * DBL_EPSILON of the sum of |terms|.
  double abs_sum = 0;
  for (float v : x) abs_sum += std::isfinite(v) ? std::fabs(v) : 0.0;
  EXPECT_NEAR(s.sum, sum, 2.0 * n * DBL_EPSILON * abs_sum);
  EXPECT_NEAR(s.sum_sq, sq, 2.0 * n * DBL_EPSILON * sq);
}

TEST(SplitMomentsTest, OtherDTypesAreChunkedByElements) {
  // bf16 elements (2 bytes): chunk offsets in bytes follow the dtype.
  const size_t n = 3 * SplitMoments::kChunk + 100;
  std::vector<uint16_t> x(n);
  for (size_t i = 0; i < n; ++i) {
    float f = static_cast<float>(i % 200) - 100.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    x[i] = static_cast<uint16_t>(bits >> 16);  // exact: |f| <= 256
  }
  SplitMoments m(true);
  TensorStats s = m.Compute(DType::kBFloat16, x.data(), n);
  TensorStats whole = ComputeTensorMoments(DType::kBFloat16, x.data(), n);
  EXPECT_EQ(s.n, whole.n);
  EXPECT_EQ(s.min, -100.0);
  EXPECT_EQ(s.max, 99.0);
  // Integers: every order of summation is exact.
  EXPECT_EQ(s.sum, whole.sum);
  EXPECT_EQ(s.sum_sq, whole.sum_sq);
}

// Jobs far apart let the helper fall asleep; the next job wakes it (or is
// done without it): never a hang, never a wrong result.
TEST(SplitMomentsTest, JobsAfterTheHelperSleptAreComplete) {
  const size_t n = 8 * SplitMoments::kChunk;
  std::vector<float> x = Values(n, 3);
  TensorStats ref = ChunkedReference(x, n);
  SplitMoments m(true);
  for (int rep = 0; rep < 5; ++rep) {
    ExpectIdentical(m.Compute(DType::kFloat32, x.data(), n), ref);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace
}  // namespace lockstep
