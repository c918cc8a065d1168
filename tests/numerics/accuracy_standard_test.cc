// msprobe's accuracy-checker rules (docs/msprobe_reference.md §6.2): the
// constants per dtype, each metric on hand-computed cases, and the verdicts at
// and around their thresholds.
#include "lockstep/numerics/accuracy_standard.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace lockstep {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

TEST(AccuracyStandardTest, ConstantsAreMsprobes) {
  const MsprobeConstants& h = MsprobeConstantsFor(DType::kFloat16);
  const MsprobeConstants& b = MsprobeConstantsFor(DType::kBFloat16);
  const MsprobeConstants& f = MsprobeConstantsFor(DType::kFloat32);
  EXPECT_EQ(h.rtol, 0x1p-10);
  EXPECT_EQ(b.rtol, 0x1p-8);
  EXPECT_EQ(f.rtol, 0x1p-20);
  EXPECT_EQ(h.small_value, 0x1p-10);
  EXPECT_EQ(b.small_value, 0x1p-10);
  EXPECT_EQ(f.small_value, 0x1p-20);
  EXPECT_EQ(h.abs_small_atol, 0x1p-16);
  EXPECT_EQ(b.abs_small_atol, 1e-16);
  EXPECT_EQ(f.abs_small_atol, 0x1p-30);
  EXPECT_EQ(h.bench_small_atol, 1e-16);
  EXPECT_EQ(f.bench_small_atol, 0x1p-30);
  EXPECT_EQ(h.min_err, 0x1p-11);
  EXPECT_EQ(b.min_err, 0x1p-8);
  EXPECT_EQ(f.min_err, 0x1p-14);
  EXPECT_EQ(h.ulp_min_eb, -14);
  EXPECT_EQ(h.ulp_mantissa_bits, 10);
  EXPECT_EQ(b.ulp_min_eb, -126);
  EXPECT_EQ(b.ulp_mantissa_bits, 7);
  EXPECT_EQ(f.ulp_min_eb, -126);
  EXPECT_EQ(f.ulp_mantissa_bits, 23);
  EXPECT_EQ(f.ulp_threshold, 32);
  EXPECT_EQ(h.ulp_threshold, 1);
}

TEST(AccuracyStandardTest, UlpErrorPerElement) {
  EXPECT_EQ(MsprobeUlpError(1 + 0x1p-23, 1.0, DType::kFloat32), 1.0);
  EXPECT_EQ(MsprobeUlpError(-1 - 33 * 0x1p-23, -1.0, DType::kFloat32), 33.0);
  // A bench of 0 is measured in units of 2^-mantissa (eb = 0).
  EXPECT_EQ(MsprobeUlpError(0x1p-23, 0.0, DType::kFloat32), 1.0);
  // Subnormal benches use min_eb = -126.
  EXPECT_EQ(MsprobeUlpError(0x1p-148, 0x1p-149, DType::kFloat32), 1.0);
  EXPECT_EQ(MsprobeUlpError(1 + 0x1p-10, 1.0, DType::kFloat16), 1.0);
  EXPECT_EQ(MsprobeUlpError(0x1p-24, 0x1p-23, DType::kFloat16), 1.0);  // -14
  EXPECT_EQ(MsprobeUlpError(1.0, 1 + 0x1p-8, DType::kBFloat16), 0.5);
  // fp16 benches are fp32: the bench is rounded to float first.
  EXPECT_EQ(MsprobeUlpError(1.0, 1 + 0x1p-30, DType::kFloat16), 0.0);
  EXPECT_TRUE(std::isnan(MsprobeUlpError(kNaN, 1.0, DType::kFloat32)));
}

TEST(AccuracyStandardTest, UlpMetricsAndNaNPropagation) {
  std::vector<double> bench = {1, 1, 1, 1};
  std::vector<double> dev = {1, 1 + 0x1p-23, 1 + 40 * 0x1p-23, 1 - 3 * 0x1p-23};
  UlpMetrics m = MsprobeUlpMetrics(dev, bench, DType::kFloat32);
  EXPECT_EQ(m.max_ulp, 40);
  EXPECT_EQ(m.mean_ulp, 11);
  EXPECT_EQ(m.proportion, 0.25);  // only 40 > 32
  dev[0] = kNaN;
  m = MsprobeUlpMetrics(dev, bench, DType::kFloat32);
  EXPECT_TRUE(std::isnan(m.max_ulp));
  EXPECT_TRUE(std::isnan(m.mean_ulp));
  EXPECT_EQ(m.proportion, 0.25);  // NaN > 32 is false
}

TEST(AccuracyStandardTest, UlpVerdictFp32) {
  // The field case: a 33-ulp cos everywhere has mean 33 < 64 and passes.
  EXPECT_TRUE(JudgeUlp({33, 33, 1.0}, nullptr, DType::kFloat32).pass);
  EXPECT_FALSE(JudgeUlp({100, 64, 0.05}, nullptr, DType::kFloat32).pass);
  EXPECT_TRUE(JudgeUlp({100, 64, 0.0499}, nullptr, DType::kFloat32).pass);
  UlpMetrics gpu{100, 70, 0.2};
  EXPECT_TRUE(JudgeUlp({100, 70, 0.1}, &gpu, DType::kFloat32).pass);   // 0.5
  EXPECT_FALSE(JudgeUlp({100, 70, 0.2}, &gpu, DType::kFloat32).pass);  // 1
  StandardVerdict v = JudgeUlp({kNaN, kNaN, 0}, nullptr, DType::kFloat32);
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.message.find("inf/nan"), std::string::npos);
  UlpMetrics nan_gpu{kNaN, kNaN, 0};
  EXPECT_TRUE(JudgeUlp({kNaN, kNaN, 0}, &nan_gpu, DType::kFloat32).pass);
}

TEST(AccuracyStandardTest, UlpVerdictFp16AndBf16) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    EXPECT_TRUE(JudgeUlp({5, 1, 0.0009}, nullptr, t).pass);
    EXPECT_FALSE(JudgeUlp({5, 0.1, 0.001}, nullptr, t).pass);  // no mean rule
    UlpMetrics gpu{5, 1, 0.01};
    EXPECT_TRUE(JudgeUlp({5, 1, 0.005}, &gpu, t).pass);
  }
  // The ratio's denominator is at least min_err (bf16 2^-8): 0.002 / 2^-8
  // is 0.51 although the baseline's own proportion is half of 0.002.
  UlpMetrics low{5, 1, 0.001};
  EXPECT_TRUE(JudgeUlp({5, 1, 0.002}, &low, DType::kBFloat16).pass);
  EXPECT_FALSE(JudgeUlp({5, 1, 0.002}, nullptr, DType::kBFloat16).pass);
}

TEST(AccuracyStandardTest, AbsThresholdRatios) {
  // fp32: rtol 2^-20 on normal values, atol 2^-30 on |bench| <= 2^-20.
  std::vector<double> bench = {1.0, 1.0, 1e-7, 1e-7, kInf, kNaN, 1e39};
  std::vector<double> dev = {1 + 0x1p-21,
                             1 + 0x1p-19,  // ok, bad
                             1e-7 + 0x1p-31,
                             1e-7 + 0x1p-29,  // ok, bad
                             kInf,
                             1.0,                     // ok, bad
                             3.4028234663852886e38};  // clipped: ok
  AbsThresholdMetrics m = MsprobeAbsThreshold(dev, bench, DType::kFloat32);
  EXPECT_DOUBLE_EQ(m.rel_err_ratio, 0.5);
  EXPECT_DOUBLE_EQ(m.abs_err_ratio, 0.5);
  EXPECT_DOUBLE_EQ(m.inf_nan_error_ratio, 1.0 / 3);
  StandardVerdict v = JudgeAbsThreshold(m);
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.message.find("relative"), std::string::npos);
  EXPECT_TRUE(
      JudgeAbsThreshold(MsprobeAbsThreshold(std::vector<double>{1.0, kNaN},
                                            std::vector<double>{1.0, kNaN},
                                            DType::kFloat32))
          .pass);
}

TEST(AccuracyStandardTest, AbsThresholdFp16UsesItsRtol) {
  std::vector<double> bench = {1.0, 1.0};
  std::vector<double> dev = {1 + 0x1p-10, 1 + 0x1p-9};  // 1 ulp, 2 ulp
  AbsThresholdMetrics m = MsprobeAbsThreshold(dev, bench, DType::kFloat16);
  EXPECT_DOUBLE_EQ(m.rel_err_ratio, 0.5);
  // 70000 overflows fp16: an inf device output then passes.
  m = MsprobeAbsThreshold(std::vector<double>{kInf},
                          std::vector<double>{70000.0}, DType::kFloat16);
  EXPECT_EQ(m.inf_nan_error_ratio, 0.0);
}

TEST(AccuracyStandardTest, BenchmarkMetricsByHand) {
  // Normal: errors 2^-23 (rel 2^-23/(1+2^-52)), 0, -2^-22 at 2 (rel 2^-23);
  // small: 1e-7 with error 2^-29 > 2^-30; one inf position.
  std::vector<double> bench = {1.0, 1.0, 2.0, 1e-7, kInf};
  std::vector<double> dev = {1 + 0x1p-23, 1.0, 2 - 0x1p-22, 1e-7 + 0x1p-29,
                             kInf};
  BenchmarkMetrics m = MsprobeBenchmarkMetrics(dev, bench, DType::kFloat32);
  EXPECT_EQ(m.small_value_err_ratio, 1.0);
  double sq = 0x1p-46 + 0x1p-44;  // masked: small and inf positions
  EXPECT_DOUBLE_EQ(m.rmse, std::sqrt(sq / 5 * (5 / (3 + 1e-4) + 1e-4)));
  // larger: positions 0 and 3; smaller: position 2.
  EXPECT_DOUBLE_EQ(m.eb, 1.0 / 5);
  EXPECT_NEAR(m.max_rel_err, 0x1p-23, 1e-22);
  EXPECT_NEAR(m.mean_rel_err, 2 * 0x1p-23 / 3, 1e-22);
}

TEST(AccuracyStandardTest, BenchmarkVerdictRatiosAndLevels) {
  BenchmarkMetrics gpu{0, 1e-5, 0, 1e-5, 1e-6};  // all below min_err 2^-14
  BenchmarkMetrics npu{0, 1e-5, 0, 5e-4, 1e-6};  // max RE ratio 8.2
  BenchmarkRatios r;
  EXPECT_TRUE(
      JudgeBenchmark(npu, gpu, DType::kFloat32, GuardLevel::kL0, &r).pass);
  EXPECT_NEAR(r.max_rel_err, 5e-4 / 0x1p-14, 1e-12);
  StandardVerdict v =
      JudgeBenchmark(npu, gpu, DType::kFloat32, GuardLevel::kL2);
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.message.find("max relative error"), std::string::npos);
  npu.max_rel_err = 1e-3;  // ratio 16.4 > 10
  EXPECT_FALSE(JudgeBenchmark(npu, gpu, DType::kFloat32).pass);
  // EB is reported but not judged.
  BenchmarkMetrics eb_only{0, 0, 1.0, 0, 0};
  EXPECT_TRUE(
      JudgeBenchmark(eb_only, gpu, DType::kFloat32, GuardLevel::kL0, &r).pass);
  EXPECT_GT(r.eb, 2);
  // Non-finite: consistent when both NaN, an error otherwise.
  BenchmarkMetrics nan_m{0, kNaN, 0, 0, 0};
  EXPECT_TRUE(JudgeBenchmark(nan_m, nan_m, DType::kFloat16).pass);
  EXPECT_FALSE(JudgeBenchmark(nan_m, gpu, DType::kFloat16).pass);
}

TEST(AccuracyStandardTest, GuardLevelsOfApis) {
  EXPECT_EQ(GuardLevelOf("matmul"), GuardLevel::kL2);
  EXPECT_EQ(GuardLevelOf("GELU"), GuardLevel::kL2);
  EXPECT_EQ(GuardLevelOf("embedding"), GuardLevel::kL1);
  EXPECT_EQ(GuardLevelOf("cos"), GuardLevel::kL0);
}

}  // namespace
}  // namespace lockstep
