// PairMetrics against numbers that msprobe and numpy printed themselves, and
// the helpers (merge, cosine, distances).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "compare/tensor_test_util.h"
#include "lockstep/compare/metrics.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace {

using testing::MakeTensor;

Tensor ReadF32(const std::string& name) {
  std::string bytes = testing::ReadFileBytes(std::string(LOCKSTEP_SOURCE_DIR) +
                                             "/tests/data/metrics/" + name);
  EXPECT_EQ(bytes.size(), 40u * 4) << name;
  return Tensor::FromBytes(DType::kFloat32, {10, 4}, std::move(bytes));
}

// msprobe's cosine cell: 12 decimals, then 6 when above 0.9999.
double MsprobeCosine(double c) {
  c = RoundTo12Decimals(c);
  return c > 0.9999 ? std::round(c * 1e6) / 1e6 : c;
}

struct ToyRow {
  const char* stem;
  double max_abs, max_rel, euc;
};

// tests/fixtures/msprobe/toy/out_tensor/*.csv, rows
// Functional.relu.0.forward.{input,output}.0 (NPU = dumpB, bench = dumpA;
// data written by tests/data/metrics/make_toy_relu.py).
TEST(MsprobeParityTest, ToyReluRows) {
  const ToyRow rows[] = {{"toy_relu_fwd_in0", 0.000465512276, 0.000433017092,
                          0.0010207279838174656},
                         {"toy_relu_fwd_out0", 0.000465512276, 0.000370433321,
                          0.0007050384018372209}};
  for (const ToyRow& row : rows) {
    SCOPED_TRACE(row.stem);
    Tensor npu = ReadF32(std::string(row.stem) + ".npu.f32");
    Tensor bench = ReadF32(std::string(row.stem) + ".bench.f32");
    for (int threads : {1, 2}) {
      PairMetrics m = ComputePairMetrics(npu, bench, threads);
      EXPECT_FALSE(m.nonfinite_mismatch);
      EXPECT_EQ(RoundTo12Decimals(m.max_abs_diff), row.max_abs);
      EXPECT_EQ(RoundTo12Decimals(m.max_rel_err), row.max_rel);
      EXPECT_NEAR(EuclideanDistance(m), row.euc, 1e-12 * row.euc);
      EXPECT_EQ(RoundTo12Decimals(static_cast<double>(m.rel_lt_1e3) / m.n),
                1.0);
      EXPECT_EQ(RoundTo12Decimals(static_cast<double>(m.rel_lt_5e3) / m.n),
                1.0);
      EXPECT_EQ(MsprobeCosine(Cosine(m)), 1.0);
    }
  }
}

// Expected values printed by numpy 1.24 for msprobe's formula
// (T = result_type(A, B, float32); eps added where B == 0).
TEST(MsprobeParityTest, RelativeErrorIsComputedInFloat32) {
  // a0 / 2^-23 < 0.001 exactly, but float32 rounds a0 + eps - eps up to
  // 8389 * 2^-46, so numpy's float32 RE is 0.0010000467 and is not counted.
  float a0 = std::bit_cast<float>(0x2f031201u);
  ASSERT_LT(static_cast<double>(a0) / std::ldexp(1.0, -23), 0.001);
  std::vector<double> a = {a0, 1.1f, 0.0f, 5.0f, 1.0f};
  std::vector<double> b = {0.0f, 3.0f, 0.0f, 5.0049f, 1.0008f};
  PairMetrics m = ComputePairMetrics(MakeTensor(DType::kFloat32, a, false),
                                     MakeTensor(DType::kFloat32, b, true), 1);
  EXPECT_EQ(m.rel_lt_1e3, 3);
  EXPECT_EQ(m.rel_lt_5e3, 4);
  EXPECT_EQ(m.max_rel_err, 0.6333333253860474);
  // The first element alone: float32 RE, not the exact quotient.
  PairMetrics first =
      ComputePairMetrics(MakeTensor(DType::kFloat32, {a0}, false),
                         MakeTensor(DType::kFloat32, {0.0}, false), 1);
  EXPECT_EQ(first.max_rel_err, 0.001000046730041504);
  EXPECT_EQ(first.rel_lt_1e3, 0);
  // Element 3 alone: the float32 quotient, not the double one
  // (0.0009790362761713089).
  PairMetrics third =
      ComputePairMetrics(MakeTensor(DType::kFloat32, {5.0f}, false),
                         MakeTensor(DType::kFloat32, {5.0049f}, false), 1);
  EXPECT_EQ(third.max_rel_err, 0.0009790363255888224);
  // The same data with one side float64: T is float64 and eps is 2^-52.
  PairMetrics d = ComputePairMetrics(MakeTensor(DType::kFloat64, a, false),
                                     MakeTensor(DType::kFloat32, b, false), 1);
  EXPECT_EQ(d.max_rel_err, 536864.0625);
  PairMetrics d3 =
      ComputePairMetrics(MakeTensor(DType::kFloat64, {5.0f}, false),
                         MakeTensor(DType::kFloat32, {5.0049f}, false), 1);
  EXPECT_EQ(d3.max_rel_err, 0.0009790362761713089);
  // fp16 against fp32 is still float32: float16(1.1) = 1.099609375.
  PairMetrics h =
      ComputePairMetrics(MakeTensor(DType::kFloat16, {1.1}, false),
                         MakeTensor(DType::kFloat32, {3.0}, false), 1);
  EXPECT_EQ(h.max_rel_err, 0.6334635615348816);
  // The smallest fp16 subnormal over an fp16 zero: 2^-24 / 2^-23 (msprobe
  // before 78bf1bed added 2.2e-16, which underflows in fp16, and got inf).
  PairMetrics tiny = ComputePairMetrics(
      MakeTensor(DType::kFloat16, {std::ldexp(1.0, -24)}, false),
      MakeTensor(DType::kFloat16, {0.0}, false), 1);
  EXPECT_EQ(tiny.max_rel_err, 0.5);
}

TEST(MsprobeParityTest, IntegersAndBoolUseFloat64) {
  EXPECT_EQ(RelErrDType(DType::kInt8, DType::kFloat32), DType::kFloat64);
  EXPECT_EQ(RelErrDType(DType::kBool, DType::kBool), DType::kFloat64);
  EXPECT_EQ(RelErrDType(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(RelErrDType(DType::kFloat16, DType::kFloat64), DType::kFloat64);
  // int64 -> float64 rounds to nearest even, as astype(float64):
  // 2^53 + 1 -> 2^53 and 2^53 + 3 -> 2^53 + 4.
  std::string ab, bb;
  for (int64_t v : {(1LL << 53) + 1, (1LL << 53) + 3, -5LL})
    testing::Put(&ab, v);
  for (int64_t v : {1LL << 53, (1LL << 53) + 4, 0LL}) testing::Put(&bb, v);
  PairMetrics m =
      ComputePairMetrics(Tensor::FromBytes(DType::kInt64, {3}, ab),
                         Tensor::FromBytes(DType::kInt64, {3}, bb), 1);
  EXPECT_EQ(m.max_abs_diff, 5);
  EXPECT_EQ(m.max_rel_err, 2.251799813685248e+16);  // numpy: 5 / 2^-52
  EXPECT_EQ(m.rel_lt_1e3, 2);
  // fp64 eps on a fp64 zero: numpy gives 0.045035996273705026.
  PairMetrics z =
      ComputePairMetrics(MakeTensor(DType::kFloat64, {1e-17}, false),
                         MakeTensor(DType::kFloat64, {0.0}, false), 1);
  EXPECT_EQ(z.max_rel_err, 0.045035996273705026);
}

TEST(PairMetricsHelpersTest, MergeOfPiecesEqualsOnePass) {
  std::mt19937_64 rng(5);
  const size_t n = 100003;
  std::vector<double> va, vb;
  testing::MakePair(testing::RandomValues(DType::kFloat32, n, &rng), &rng, &va,
                    &vb);
  va[777] = vb[777] = NAN;
  Tensor a = MakeTensor(DType::kFloat32, va, false),
         b = MakeTensor(DType::kFloat16, vb, false);
  PairMetrics whole = ComputePairMetrics(a, b, 2);
  for (size_t split :
       {size_t{0}, size_t{1}, size_t{777}, size_t{65536}, size_t{99999}, n}) {
    const float* pa = a.data_as<float>();
    const uint16_t* pb = b.data_as<uint16_t>();
    PairMetrics total =
        ComputePairMetrics(DType::kFloat32, pa, DType::kFloat16, pb, split, 1);
    MergePairMetrics(
        ComputePairMetrics(DType::kFloat32, pa + split, DType::kFloat16,
                           pb + split, n - split, 2),
        &total);
    EXPECT_EQ(total.n, whole.n) << split;
    EXPECT_EQ(total.nan_a, 1) << split;
    EXPECT_EQ(total.rel_lt_1e3, whole.rel_lt_1e3) << split;
    EXPECT_EQ(total.rel_lt_5e3, whole.rel_lt_5e3) << split;
    EXPECT_EQ(total.max_abs_diff, whole.max_abs_diff) << split;
    EXPECT_EQ(total.max_rel_err, whole.max_rel_err) << split;
    EXPECT_NEAR(total.sum_d2, whole.sum_d2, 1e-12 * whole.sum_d2) << split;
    EXPECT_NEAR(total.dot, whole.dot, 1e-12 * whole.sum_a2) << split;
  }
  // NaN maxima win in a merge, whichever side holds them.
  PairMetrics nan_part;
  nan_part.max_abs_diff = NAN;
  PairMetrics t = whole;
  MergePairMetrics(nan_part, &t);
  EXPECT_TRUE(std::isnan(t.max_abs_diff));
  MergePairMetrics(whole, &t);
  EXPECT_TRUE(std::isnan(t.max_abs_diff));
}

TEST(PairMetricsHelpersTest, CosineAndDistances) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  const size_t n = 4096;
  std::vector<double> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = normal(rng);
    b[i] = a[i] * (1 + 1e-7 * normal(rng));  // 1 - cos ~ 1e-15
  }
  PairMetrics m = ComputePairMetrics(MakeTensor(DType::kFloat64, a, false),
                                     MakeTensor(DType::kFloat64, b, false), 2);
  long double dot = 0, na = 0, nb = 0, d2 = 0;
  for (size_t i = 0; i < n; ++i) {
    dot += (long double)a[i] * b[i];
    na += (long double)a[i] * a[i];
    nb += (long double)b[i] * b[i];
    d2 += ((long double)a[i] - b[i]) * ((long double)a[i] - b[i]);
  }
  // 1 - cos from the exact identity (|a-b|^2 - (|a|-|b|)^2) / (2|a||b|) in
  // long double: good to ~1e-8 relative at 1 - cos ~ 1e-15.
  long double la = std::sqrt(na), lb = std::sqrt(nb);
  double want =
      static_cast<double>((d2 - (la - lb) * (la - lb)) / (2 * la * lb));
  ASSERT_GT(want, 1e-17);
  EXPECT_NEAR(OneMinusCosine(m), want, 1e-6 * want);
  // Cosine: 8 eps * max(|ref|, 1) (rounding of the sums, sqrt and quotient).
  const double kEps = std::numeric_limits<double>::epsilon();
  EXPECT_NEAR(Cosine(m), static_cast<double>(dot / (la * lb)), 8 * kEps);
  EXPECT_NEAR(EuclideanDistance(m), static_cast<double>(std::sqrt(d2)),
              1e-12 * std::sqrt((double)d2));
  PairMetrics zero;
  EXPECT_TRUE(std::isnan(Cosine(zero)));
  EXPECT_TRUE(std::isnan(OneMinusCosine(zero)));
  EXPECT_EQ(EuclideanDistance(zero), 0);
  PairMetrics same =
      ComputePairMetrics(MakeTensor(DType::kFloat32, a, false),
                         MakeTensor(DType::kFloat32, a, true), 1);
  EXPECT_EQ(OneMinusCosine(same), 0);
}

}  // namespace
}  // namespace lockstep
