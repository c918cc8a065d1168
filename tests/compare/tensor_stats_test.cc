#include "lockstep/compare/tensor_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "compare/tensor_test_util.h"
#include "lockstep/numerics/half.h"
#include "numerics/kernel_util.h"
#include "testing/cpu_levels.h"

namespace lockstep {
namespace {

using testing::Decode;
using testing::MakeTensor;

constexpr double kEps = std::numeric_limits<double>::epsilon();
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Plain reference: long double sums over the finite values.
struct RefStats {
  int64_t nan = 0, pos_inf = 0, neg_inf = 0, half = 0, bf16 = 0;
  double min = kInf, max = -kInf;
  long double sum = 0, sum_sq = 0, abs_sum = 0;
};

RefStats Reference(const std::vector<double>& x, size_t k) {
  RefStats r;
  for (size_t i = 0; i < k; ++i) {
    double v = x[i];
    if (std::isnan(v)) {
      ++r.nan;
    } else if (std::isinf(v)) {
      ++(v > 0 ? r.pos_inf : r.neg_inf);
    } else {
      r.min = std::min(r.min, v);
      r.max = std::max(r.max, v);
      r.sum += v;
      r.abs_sum += std::fabs(v);
      r.sum_sq += static_cast<long double>(v) * v;
      r.half += std::fabs(v) == 65504.0;
      r.bf16 += std::fabs(v) == 3.3895313892515355e38;
    }
  }
  return r;
}

// |got - want| <= (k + 2) * eps * max(scale, 1), scale = sum of |terms|.
bool Close(double got, long double want, long double scale, size_t k) {
  return std::fabs(got - want) <=
         (k + 2) * kEps * std::max<long double>(scale, 1);
}

// Empty when `got` matches the reference over the first k values.
// With !saturation (ComputeTensorMoments) the saturation counts must be 0.
std::string Mismatch(const TensorStats& got, const std::vector<double>& x,
                     size_t k, bool saturation = true) {
  RefStats r = Reference(x, k);
  if (!saturation) r.half = r.bf16 = 0;
  std::ostringstream out;
  out.precision(17);
  int64_t finite = static_cast<int64_t>(k) - r.nan - r.pos_inf - r.neg_inf;
  if (got.n != static_cast<int64_t>(k) || got.finite != finite)
    out << " n/finite";
  if (got.nan != r.nan) out << " nan=" << got.nan << " want " << r.nan;
  if (got.pos_inf != r.pos_inf || got.neg_inf != r.neg_inf)
    out << " inf counts";
  if (got.at_half_max != r.half)
    out << " at_half_max=" << got.at_half_max << " want " << r.half;
  if (got.at_bf16_max != r.bf16)
    out << " at_bf16_max=" << got.at_bf16_max << " want " << r.bf16;
  if (got.min != r.min) out << " min=" << got.min << " want " << r.min;
  if (got.max != r.max) out << " max=" << got.max << " want " << r.max;
  if (!Close(got.sum, r.sum, r.abs_sum, k))
    out << " sum=" << got.sum << " want " << (double)r.sum;
  if (!Close(got.sum_sq, r.sum_sq, r.sum_sq, k))
    out << " sum_sq=" << got.sum_sq;
  return out.str();
}

// The shortest failing prefix (bisection) and the values around its end; the
// vector kernels take 8 values at a time, so the culprit may be any of the 7
// before the marked one.
std::string DescribeFirstBad(const Tensor& t, const std::vector<double>& x) {
  size_t ok = 0, bad = x.size();
  while (bad - ok > 1) {
    size_t mid = ok + (bad - ok) / 2;
    (Mismatch(ComputeTensorStats(t.dtype(), t.data(), mid, 1), x, mid).empty()
         ? ok
         : bad) = mid;
  }
  std::ostringstream out;
  out.precision(17);
  out << "\n  first bad index " << bad - 1 << ":";
  for (size_t j = bad >= 8 ? bad - 8 : 0; j < std::min(x.size(), bad + 2);
       ++j) {
    out << "\n    [" << j << "] " << x[j] << (j == bad - 1 ? "  <--" : "");
  }
  return out.str();
}

void ExpectIdentical(const TensorStats& x, const TensorStats& y,
                     const std::string& label) {
  for (auto f : {&TensorStats::n, &TensorStats::finite, &TensorStats::nan,
                 &TensorStats::pos_inf, &TensorStats::neg_inf,
                 &TensorStats::at_half_max, &TensorStats::at_bf16_max}) {
    EXPECT_EQ(x.*f, y.*f) << label;
  }
  for (auto f : {&TensorStats::min, &TensorStats::max, &TensorStats::sum,
                 &TensorStats::sum_sq}) {
    EXPECT_EQ(x.*f, y.*f) << label;
  }
}

// Checks every kernel path and 1 vs 2 threads (bit-identical), and
// ComputeTensorMoments against the same reference (sums to the same
// tolerance; min, max and counts identical to ComputeTensorStats's).
void CheckStats(const Tensor& t, const std::string& label) {
  SCOPED_TRACE(label);
  std::vector<double> x = Decode(t);
  testing::ForEachCpuLevel([&](CpuLevel level) {
    std::string path = CpuLevelName(level);
    TensorStats one = ComputeTensorStats(t, 1);
    std::string m = Mismatch(one, x, x.size());
    if (!m.empty()) ADD_FAILURE() << path << ":" << m << DescribeFirstBad(t, x);
    ExpectIdentical(one, ComputeTensorStats(t, 2), path + " threads 1 vs 2");
    TensorStats moments = ComputeTensorMoments(t.dtype(), t.data(), x.size());
    std::string mm = Mismatch(moments, x, x.size(), /*saturation=*/false);
    if (!mm.empty()) ADD_FAILURE() << path << " moments:" << mm;
    EXPECT_EQ(moments.min, one.min) << path;
    EXPECT_EQ(moments.max, one.max) << path;
  });
}

// Random values with ~1% each of NaN, +inf, -inf, +-65504 and +-bf16 max
// where the dtype can hold them (65504 also in wide integers).
std::vector<double> ValuesWithSpecials(DType t, size_t n,
                                       std::mt19937_64* rng) {
  std::vector<double> v = testing::RandomValues(t, n, rng);
  bool is_float = t == DType::kFloat32 || t == DType::kFloat16 ||
                  t == DType::kBFloat16 || t == DType::kFloat64;
  bool wide_int =
      t == DType::kInt32 || t == DType::kInt64 || t == DType::kUInt32;
  const double specials[] = {kNaN,   kInf,         -kInf,        65504,
                             -65504, kBFloat16Max, -kBFloat16Max};
  std::uniform_int_distribution<int> pick(0, 99);
  for (double& x : v) {
    int p = pick(*rng);
    if (p < 7 && is_float) x = specials[p];
    if (p == 7 && wide_int) x = 65504;
  }
  return v;
}

TEST(TensorStatsTest, AllDTypesAgainstReference) {
  for (DType t : testing::AllDTypes()) {
    for (size_t n : {0, 1, 7, 1000, 100003}) {
      for (bool misaligned : {false, true}) {
        std::mt19937_64 rng(n * 31 + static_cast<int>(t));
        std::ostringstream label;
        label << TorchDTypeName(t) << " n=" << n
              << (misaligned ? " misaligned" : "");
        // Plain values (extremes found by the vector lanes) and values
        // with specials (extremes and counts across both paths).
        CheckStats(MakeTensor(t, testing::RandomValues(t, n, &rng), misaligned),
                   label.str());
        CheckStats(MakeTensor(t, ValuesWithSpecials(t, n, &rng), misaligned),
                   label.str() + " with specials");
      }
    }
  }
}

// Runs of non-finite values (a causal mask's -inf rows, a NaN-filled
// stretch) between finite stretches: spans go to Checked after a failed
// optimistic one, back off, and return to the optimistic path (RunKernel);
// every path must count and skip them exactly.
TEST(TensorStatsTest, RunsOfNonFiniteValuesAgainstReference) {
  const double specials[] = {-kInf, kNaN, kInf};
  for (DType t :
       {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    std::mt19937_64 rng(static_cast<int>(t) + 7);
    std::vector<double> v = testing::RandomValues(t, 150011, &rng);
    std::uniform_int_distribution<size_t> run(1, 9000);
    std::uniform_int_distribution<int> pick(0, 5);
    for (size_t i = 0; i < v.size();) {
      size_t len = run(rng);
      int kind = pick(rng);  // 0-2: one special throughout; 3: causal rows
      for (size_t j = i; j < std::min(v.size(), i + len); ++j) {
        if (kind < 3) v[j] = specials[kind];
        if (kind == 3 && (j % 64) > ((j / 64) % 64)) v[j] = -kInf;
      }
      i += 2 * len;  // a finite stretch as long after it
    }
    for (bool misaligned : {false, true}) {
      CheckStats(
          MakeTensor(t, v, misaligned),
          std::string(TorchDTypeName(t)) + (misaligned ? " misaligned" : ""));
    }
  }
}

// Small int64 values take the vector conversion; a few large ones (beyond
// its range [-2^51, 2^51)) force the per-lane path for their span.
TEST(TensorStatsTest, Int64SmallAndLargeValues) {
  for (size_t n : {1000, 100003}) {
    std::mt19937_64 rng(n);
    std::vector<double> v = testing::RandomValues(DType::kInt16, n, &rng);
    v.back() = 65504;
    CheckStats(MakeTensor(DType::kInt64, v, true), "small int64");
    std::string bytes;
    for (size_t i = 0; i < n; ++i) {
      int64_t x = static_cast<int64_t>(v[i]);
      if (i % 997 == 5) x = (int64_t{1} << 53) + 1;
      if (i % 991 == 7) x = -(int64_t{1} << 51) - 1;
      testing::Put(&bytes, x);
    }
    CheckStats(
        Tensor::FromBytes(DType::kInt64, {static_cast<int64_t>(n)}, bytes),
        "int64 with large values");
  }
}

TEST(TensorStatsTest, SaturationAndNonFiniteCounts) {
  Tensor t = MakeTensor(DType::kFloat16,
                        {65504, -65504, 1e6, -1e6, kNaN, 3, -2}, true);
  TensorStats s = ComputeTensorStats(t, 1);
  EXPECT_EQ(s.n, 7);
  EXPECT_EQ(s.finite, 4);
  EXPECT_EQ(s.at_half_max, 2);
  EXPECT_EQ(s.pos_inf, 1);  // 1e6 overflows fp16
  EXPECT_EQ(s.neg_inf, 1);
  EXPECT_EQ(s.nan, 1);
  EXPECT_EQ(s.min, -65504);
  EXPECT_EQ(s.max, 65504);
  EXPECT_EQ(s.sum, 1);
  EXPECT_EQ(Mean(s), 0.25);
  TensorStats b = ComputeTensorStats(
      MakeTensor(DType::kBFloat16, {kBFloat16Max, -kBFloat16Max, 1}, false), 1);
  EXPECT_EQ(b.at_bf16_max, 2);
  EXPECT_EQ(b.max, kBFloat16Max);
}

TEST(TensorStatsTest, NoFiniteValuesGiveTheIdentity) {
  std::vector<double> nans(20, kNaN);
  TensorStats s =
      ComputeTensorStats(MakeTensor(DType::kFloat32, nans, false), 2);
  EXPECT_EQ(s.nan, 20);
  EXPECT_EQ(s.finite, 0);
  EXPECT_EQ(s.min, kInf);
  EXPECT_EQ(s.max, -kInf);
  EXPECT_TRUE(std::isnan(Mean(s)));
  EXPECT_EQ(L2Norm(s), 0);
  TensorStats empty =
      ComputeTensorStats(MakeTensor(DType::kInt64, {}, false), 2);
  EXPECT_EQ(empty.n, 0);
  EXPECT_EQ(empty.min, kInf);
}

TEST(TensorStatsTest, MergeOfPiecesEqualsOnePass) {
  std::mt19937_64 rng(3);
  const size_t n = 200001;
  std::vector<double> v = ValuesWithSpecials(DType::kFloat32, n, &rng);
  Tensor t = MakeTensor(DType::kFloat32, v, false);
  TensorStats whole = ComputeTensorStats(t, 2);
  for (size_t split :
       {size_t{0}, size_t{3}, size_t{65536}, size_t{123457}, n}) {
    const float* p = t.data_as<float>();
    TensorStats total = ComputeTensorStats(DType::kFloat32, p, split, 2);
    MergeTensorStats(
        ComputeTensorStats(DType::kFloat32, p + split, n - split, 1), &total);
    EXPECT_EQ(total.n, whole.n);
    EXPECT_EQ(total.nan, whole.nan);
    EXPECT_EQ(total.at_bf16_max, whole.at_bf16_max);
    EXPECT_EQ(total.min, whole.min);
    EXPECT_EQ(total.max, whole.max);
    EXPECT_NEAR(total.sum_sq, whole.sum_sq, 1e-12 * whole.sum_sq);
  }
}

// msprobe's toy dump: NPU max/min of Functional.relu.0.forward.input.0 are
// exact; its mean and l2norm were computed by torch in float32.
TEST(TensorStatsTest, MsprobeToyNpuStatistics) {
  std::string bytes =
      testing::ReadFileBytes(std::string(LOCKSTEP_SOURCE_DIR) +
                             "/tests/data/metrics/toy_relu_fwd_in0.npu.f32");
  TensorStats s =
      ComputeTensorStats(Tensor::FromBytes(DType::kFloat32, {10, 4}, bytes), 1);
  EXPECT_EQ(s.max, 1.462890625);
  EXPECT_EQ(s.min, -1.314453125);
  EXPECT_NEAR(Mean(s), -0.17231635749340057, 1e-6 * 0.1723);
  EXPECT_NEAR(L2Norm(s), 3.7471673488616943, 1e-6 * 3.75);
}

}  // namespace
}  // namespace lockstep
