// The judging rules of msprobe's API accuracy checker (run_ut / acc_check),
// as library functions: the ULP standard, the absolute-threshold standard and
// the benchmark standard with its NPU/GPU ratios. Source:
// docs/msprobe_reference.md §6.2 ("Metrics"), which describes msprobe
// HEAD `python/msprobe/pytorch/api_accuracy_checker/compare/algorithm.py`,
// `precision_standard/{ulp_compare,absolute_threshold,benchmark_compare,
// standard_config}.py`; the constants below are that file's, per dtype.
//
// Inputs, as msprobe has them: `device` holds the outputs of the device under
// test (values of `dtype`: fp16, bf16 or fp32), `bench` the CPU benchmark's
// outputs, which msprobe computes one precision up: fp64 for fp32 devices,
// fp32 for fp16/bf16 devices. Pass both as doubles; for fp16/bf16 the bench
// is rounded to float here, as msprobe's would be. Element-wise arithmetic
// follows msprobe's choice of precision where it matters (the ULP error:
// fp64 for fp32, fp32 otherwise); everything else is computed in double.
//
// NaN/Inf: as in msprobe. The ULP metrics propagate them (one NaN ulp error
// makes max/mean NaN, an inf one makes them inf); the absolute-threshold and
// benchmark standards mask positions where either side is not finite and
// count them separately (inf_nan_error_ratio).
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_ACCURACY_STANDARD_H_
#define LOCKSTEP_NUMERICS_ACCURACY_STANDARD_H_

#include <span>
#include <string>

#include "lockstep/numerics/dtype.h"

namespace lockstep {

// Per-dtype constants of msprobe's standard_config.py / compare_utils.py.
struct MsprobeConstants {
  double rtol;                // absolute threshold: relative tolerance
  double small_value;         // |bench| <= small_value counts as small
  double abs_small_atol;      // absolute threshold: atol on small values
  double bench_small_atol;    // benchmark: atol on small values
  double min_err;             // ratio denominators: max(|gpu|, min_err)
  double bench_eps;           // |bench| + eps in relative errors
  double max_value;           // clip bound for inf/nan checks
  int ulp_min_eb;             // ULP: smallest binade exponent
  int ulp_mantissa_bits;      // ULP: explicit mantissa bits
  double ulp_threshold;       // ULP: "ulp > threshold" counts
  double ulp_proportion_max;  // ULP: pass if proportion < this
};
// REQUIRES: dtype is kFloat16, kBFloat16 or kFloat32.
const MsprobeConstants& MsprobeConstantsFor(DType dtype);

// msprobe's per-element ULP error (compare/algorithm.py:get_ulp_err):
// eb = max(floor(log2|bench|), min_eb), eb = 0 when bench == 0 (so a zero
// benchmark is measured in units of 2^-mantissa_bits, msprobe's quirk),
// ulp = |(device - bench) * 2^(mantissa_bits - eb)|.
double MsprobeUlpError(double device, double bench, DType dtype);

// ---- ULP standard (ULP误差比对法) ----
struct UlpMetrics {
  double max_ulp = 0;   // ULP误差最大值
  double mean_ulp = 0;  // ULP误差平均值
  double proportion = 0;  // ULP误差大于阈值占比: count(ulp > threshold) / N
};
// REQUIRES: device.size() == bench.size() > 0.
UlpMetrics MsprobeUlpMetrics(std::span<const double> device,
                             std::span<const double> bench, DType dtype);

// A standard's verdict: pass, and a message naming the failed rule(s).
struct StandardVerdict {
  bool pass = true;
  std::string message;
};

// fp32: pass if mean_ulp < 64, or proportion < 0.05, or proportion ratio
// < 1; fp16/bf16: pass if proportion < 0.001 or proportion ratio < 1.
// The ratio is |device.proportion| / max(|baseline.proportion|, min_err);
// with no baseline (nullptr, a single-device audit) that clause is absent.
// NaN/inf in the judged metrics: error unless the baseline's are the same
// non-finite value (msprobe's check_inf_or_nan).
StandardVerdict JudgeUlp(const UlpMetrics& device, const UlpMetrics* baseline,
                         DType dtype);

// ---- Absolute-threshold standard (绝对阈值法) ----
struct AbsThresholdMetrics {
  double inf_nan_error_ratio = 0;  // inf/nan错误率
  double rel_err_ratio = 0;        // 相对误差错误率 (normal values)
  double abs_err_ratio = 0;        // 绝对误差错误率 (small values)
};
// REQUIRES: device.size() == bench.size().
AbsThresholdMetrics MsprobeAbsThreshold(std::span<const double> device,
                                        std::span<const double> bench,
                                        DType dtype);
// Pass iff all three ratios are exactly 0.
StandardVerdict JudgeAbsThreshold(const AbsThresholdMetrics& m);

// ---- Benchmark standard (标杆比对法) ----
struct BenchmarkMetrics {
  double small_value_err_ratio = 0;  // 小值域错误占比
  double rmse = 0;                   // 均方根误差
  double eb = 0;                     // 误差均衡性
  double max_rel_err = 0;            // 相对误差最大值
  double mean_rel_err = 0;           // 相对误差平均值
};
// REQUIRES: device.size() == bench.size() > 0.
BenchmarkMetrics MsprobeBenchmarkMetrics(std::span<const double> device,
                                         std::span<const double> bench,
                                         DType dtype);

// msprobe HEAD's API guard levels for the ratio thresholds (max RE / mean
// RE / RMSE): L0 10/2/2 (default), L1 5/1.5/1.5, L2 2/1.2/1.2; small-value
// ratio 2 at every level; EB is reported but not judged.
enum class GuardLevel { kL0, kL1, kL2 };
// The level msprobe HEAD gives an API name (e.g. "matmul" -> L2).
GuardLevel GuardLevelOf(const std::string& api_name);

struct BenchmarkRatios {
  double small_value = 0, rmse = 0, max_rel_err = 0, mean_rel_err = 0, eb = 0;
};
// ratio = |npu| / max(|gpu|, min_err) per metric; error when a ratio exceeds
// its threshold or the two sides' non-finite values disagree.
StandardVerdict JudgeBenchmark(const BenchmarkMetrics& npu,
                               const BenchmarkMetrics& gpu, DType dtype,
                               GuardLevel level = GuardLevel::kL0,
                               BenchmarkRatios* ratios = nullptr);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_ACCURACY_STANDARD_H_
