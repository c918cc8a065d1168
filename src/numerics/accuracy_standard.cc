#include "lockstep/numerics/accuracy_standard.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "lockstep/core/check.h"
#include "lockstep/numerics/half.h"
#include "lockstep/numerics/ulp.h"

namespace lockstep {
namespace {

constexpr double kFloatMax = 3.4028234663852886e38;

// msprobe standard_config.py (_rtol, _small_value, _threshold_small_value_atol,
// _benchmark_small_value_atol, _minmum_err), compare_utils.py ULP_PARAMETERS,
// const.py ULP thresholds and BFLOAT16_EPS/MIN/MAX. bench_eps is
// np.finfo(bench.dtype).eps: the bench is fp64 for fp32 devices, fp32 for
// fp16 devices; bf16 uses BFLOAT16_EPS = 2^-8.
const MsprobeConstants kFp16 = {0x1p-10, 0x1p-10, 0x1p-16,  1e-16,
                                0x1p-11, 0x1p-23, kHalfMax, -14,
                                10,      1,       0.001};
const MsprobeConstants kBf16 = {0x1p-8, 0x1p-10, 1e-16,        1e-16,
                                0x1p-8, 0x1p-8,  kBFloat16Max, -126,
                                7,      1,       0.001};
const MsprobeConstants kFp32 = {0x1p-20, 0x1p-20, 0x1p-30,   0x1p-30,
                                0x1p-14, 0x1p-52, kFloatMax, -126,
                                23,      32,      0.05};
constexpr double kFp32MeanUlpMax = 64;
constexpr double kProportionRatioMax = 1;

bool IsFinite(double x) { return std::isfinite(x); }

// The benchmark as msprobe holds it: fp64 for fp32 devices, fp32 otherwise.
double BenchValue(double bench, DType dtype) {
  return dtype == DType::kFloat32
             ? bench
             : static_cast<double>(static_cast<float>(bench));
}

// msprobe's `bench.astype(device_output.dtype)`. Device bf16 outputs reach
// numpy as float32 (numpy has no bf16), so bf16 casts to float32.
double CastToDevice(double bench, DType dtype) {
  if (dtype == DType::kFloat16) return RoundToFormat(bench, DType::kFloat16);
  return static_cast<double>(static_cast<float>(bench));
}

// The masks and errors both standards share (algorithm.py).
struct Element {
  double abs_bench, abs_bench_eps, abs_err;
  bool both_finite, small;
};

Element Classify(double device, double bench, DType dtype,
                 const MsprobeConstants& c) {
  Element e;
  e.abs_bench = std::fabs(bench);
  e.abs_bench_eps = e.abs_bench + c.bench_eps;
  e.abs_err = std::fabs(device - bench);
  e.both_finite = IsFinite(device) && IsFinite(CastToDevice(bench, dtype));
  e.small = e.abs_bench <= c.small_value && e.both_finite;
  return e;
}

// check_inf_nan_value for one inf/nan position: passes if the values clipped
// to the dtype's range agree to rtol, or both are NaN.
bool InfNanPasses(double device, double bench, const Element& e, DType dtype,
                  const MsprobeConstants& c) {
  double golden = CastToDevice(bench, dtype);
  double g = std::isnan(golden) ? golden
                                : std::clamp(golden, -c.max_value, c.max_value);
  double d = std::isnan(device) ? device
                                : std::clamp(device, -c.max_value, c.max_value);
  double re = std::fabs(d - g) / e.abs_bench_eps;
  return re <= c.rtol || (std::isnan(device) && std::isnan(g));
}

double Ratio(size_t count, size_t of) {
  return of == 0 ? 0.0 : static_cast<double>(count) / static_cast<double>(of);
}

// check_inf_or_nan: non-finite values on either side are consistent only
// when both are the same inf or both NaN.
bool NonFiniteConsistent(double npu, double gpu) {
  if (std::isinf(npu) || std::isinf(gpu)) return npu == gpu;
  return std::isnan(npu) && std::isnan(gpu);
}

bool AnyNonFinite(double a, double b) { return !IsFinite(a) || !IsFinite(b); }

double CalcRatio(double npu, double gpu, const MsprobeConstants& c) {
  return std::fabs(npu) / std::max(std::fabs(gpu), c.min_err);
}

void Fail(StandardVerdict* v, const std::string& what) {
  v->pass = false;
  if (!v->message.empty()) v->message += "; ";
  v->message += what;
}

}  // namespace

const MsprobeConstants& MsprobeConstantsFor(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return kFp16;
    case DType::kBFloat16:
      return kBf16;
    default:
      LOCKSTEP_CHECK(dtype == DType::kFloat32);
      return kFp32;
  }
}

double MsprobeUlpError(double device, double bench, DType dtype) {
  const MsprobeConstants& c = MsprobeConstantsFor(dtype);
  double b = BenchValue(bench, dtype);
  // np.log2 in the bench's precision, then floor (so a bench just below a
  // power of two may land in the binade above, as in msprobe).
  double abs_b = std::fabs(b);
  double lg = dtype == DType::kFloat32
                  ? std::log2(abs_b)
                  : static_cast<double>(static_cast<float>(std::log2(abs_b)));
  double eb = abs_b == 0 ? 0.0 : std::floor(lg);
  eb = std::max(eb, static_cast<double>(c.ulp_min_eb));
  double scale = std::exp2(c.ulp_mantissa_bits - eb);
  if (dtype == DType::kFloat32) return std::fabs((device - b) * scale);
  float diff = static_cast<float>(device) - static_cast<float>(b);
  return std::fabs(static_cast<double>(diff * static_cast<float>(scale)));
}

UlpMetrics MsprobeUlpMetrics(std::span<const double> device,
                             std::span<const double> bench, DType dtype) {
  LOCKSTEP_CHECK(device.size() == bench.size() && !device.empty());
  const MsprobeConstants& c = MsprobeConstantsFor(dtype);
  UlpMetrics m;
  double sum = 0;
  size_t over = 0;
  bool nan = false;
  for (size_t i = 0; i < device.size(); ++i) {
    double u = MsprobeUlpError(device[i], bench[i], dtype);
    nan |= std::isnan(u);
    if (u > m.max_ulp) m.max_ulp = u;
    sum += u;
    over += u > c.ulp_threshold;
  }
  m.mean_ulp = sum / static_cast<double>(device.size());
  m.proportion = Ratio(over, device.size());
  if (nan) m.max_ulp = m.mean_ulp = std::nan("");  // np.max/np.mean propagate
  return m;
}

StandardVerdict JudgeUlp(const UlpMetrics& device, const UlpMetrics* baseline,
                         DType dtype) {
  const MsprobeConstants& c = MsprobeConstantsFor(dtype);
  StandardVerdict v;
  double gpu_mean = baseline ? baseline->mean_ulp : 0.0;
  double gpu_prop = baseline ? baseline->proportion : 0.0;
  bool has_ratio = baseline != nullptr;
  if (AnyNonFinite(device.mean_ulp, gpu_mean) &&
      !NonFiniteConsistent(device.mean_ulp, gpu_mean)) {
    Fail(&v, "ULP: mean ulp error is inf/nan");
    return v;
  }
  if (AnyNonFinite(device.proportion, gpu_prop)) {
    if (!NonFiniteConsistent(device.proportion, gpu_prop)) {
      Fail(&v, "ULP: ulp error proportion is inf/nan");
      return v;
    }
    has_ratio = false;  // msprobe's ratio is NaN then: never below 1
  }
  double ratio = has_ratio ? CalcRatio(device.proportion, gpu_prop, c) : 0.0;
  bool pass = device.proportion < c.ulp_proportion_max ||
              (has_ratio && ratio < kProportionRatioMax);
  if (dtype == DType::kFloat32) pass |= device.mean_ulp < kFp32MeanUlpMax;
  if (!pass) Fail(&v, "ULP: ulp error does not meet the standard");
  return v;
}

AbsThresholdMetrics MsprobeAbsThreshold(std::span<const double> device,
                                        std::span<const double> bench,
                                        DType dtype) {
  LOCKSTEP_CHECK(device.size() == bench.size());
  const MsprobeConstants& c = MsprobeConstantsFor(dtype);
  size_t inf_nan = 0, inf_nan_bad = 0, normal = 0, normal_bad = 0, small = 0,
         small_bad = 0;
  for (size_t i = 0; i < device.size(); ++i) {
    double b = BenchValue(bench[i], dtype);
    Element e = Classify(device[i], b, dtype, c);
    if (!e.both_finite) {
      ++inf_nan;
      inf_nan_bad += !InfNanPasses(device[i], b, e, dtype, c);
    } else if (e.small) {
      ++small;
      small_bad += e.abs_err > c.abs_small_atol;
    } else {
      ++normal;
      normal_bad += e.abs_err / e.abs_bench_eps > c.rtol;
    }
  }
  return {Ratio(inf_nan_bad, inf_nan), Ratio(normal_bad, normal),
          Ratio(small_bad, small)};
}

StandardVerdict JudgeAbsThreshold(const AbsThresholdMetrics& m) {
  StandardVerdict v;
  if (m.inf_nan_error_ratio != 0) Fail(&v, "inf/nan error ratio is not 0");
  if (m.rel_err_ratio != 0) Fail(&v, "relative error ratio is not 0");
  if (m.abs_err_ratio != 0) Fail(&v, "absolute error ratio is not 0");
  return v;
}

BenchmarkMetrics MsprobeBenchmarkMetrics(std::span<const double> device,
                                         std::span<const double> bench,
                                         DType dtype) {
  LOCKSTEP_CHECK(device.size() == bench.size() && !device.empty());
  const MsprobeConstants& c = MsprobeConstantsFor(dtype);
  size_t n = device.size(), small = 0, small_bad = 0, masked = 0, rel_n = 0;
  size_t larger = 0, smaller = 0;
  double sq = 0, rel_sum = 0, rel_max = -1;
  for (size_t i = 0; i < n; ++i) {
    double b = BenchValue(bench[i], dtype);
    Element e = Classify(device[i], b, dtype, c);
    double diff = device[i] - CastToDevice(b, dtype);
    larger += diff > 0;
    smaller += diff < 0;
    small += e.small;
    small_bad += e.small && e.abs_err > c.bench_small_atol;
    if (e.small || !e.both_finite) {  // get_rmse's mask; rel_err = -1
      ++masked;
      continue;
    }
    sq += e.abs_err * e.abs_err;
    double re = e.abs_err / e.abs_bench_eps;
    rel_max = std::max(rel_max, re);
    rel_sum += re;
    ++rel_n;
  }
  BenchmarkMetrics m;
  m.small_value_err_ratio = Ratio(small_bad, small);
  double dn = static_cast<double>(n);
  double mse =
      sq / dn * (dn / (dn - static_cast<double>(masked) + 1e-4) + 1e-4);
  m.rmse = std::sqrt(mse);
  m.eb = std::fabs(static_cast<double>(larger) - static_cast<double>(smaller)) /
         dn;
  m.max_rel_err = rel_max >= 0 ? rel_max : 0.0;
  m.mean_rel_err = rel_n == 0 ? 0.0 : rel_sum / static_cast<double>(rel_n);
  return m;
}

GuardLevel GuardLevelOf(const std::string& api_name) {
  static const std::set<std::string> kL1 = {
      "embedding", "npu_fusion_attention_grad", "npu_fusion_attention",
      "scatter_", "scatter_add_"};
  static const std::set<std::string> kL2 = {"addmm",
                                            "npu_cross_entropy_loss",
                                            "npu_cross_entropy_loss_backward",
                                            "GELU",
                                            "layer_norm",
                                            "matmul",
                                            "mm",
                                            "index",
                                            "one_hot",
                                            "sum",
                                            "npu_rms_norm",
                                            "npu_rms_norm_backward",
                                            "nonzero"};
  if (kL2.count(api_name)) return GuardLevel::kL2;
  if (kL1.count(api_name)) return GuardLevel::kL1;
  return GuardLevel::kL0;
}

namespace {

// One metric of the benchmark standard: its ratio into *ratio (NaN when a
// side is not finite) and whether it passes `threshold`.
bool JudgeRatio(double npu, double gpu, double threshold,
                const MsprobeConstants& c, double* ratio) {
  if (AnyNonFinite(npu, gpu)) {
    *ratio = std::nan("");
    return NonFiniteConsistent(npu, gpu);
  }
  *ratio = CalcRatio(npu, gpu, c);
  return !(*ratio > threshold);
}

}  // namespace

StandardVerdict JudgeBenchmark(const BenchmarkMetrics& npu,
                               const BenchmarkMetrics& gpu, DType dtype,
                               GuardLevel level, BenchmarkRatios* ratios) {
  const MsprobeConstants& c = MsprobeConstantsFor(dtype);
  static const double kMaxRe[] = {10, 5, 2}, kMeanRe[] = {2, 1.5, 1.2},
                      kRmse[] = {2, 1.5, 1.2};
  int l = static_cast<int>(level);
  BenchmarkRatios r;
  StandardVerdict v;
  if (!JudgeRatio(npu.small_value_err_ratio, gpu.small_value_err_ratio, 2, c,
                  &r.small_value)) {
    Fail(&v, "small-value error ratio");
  }
  if (!JudgeRatio(npu.rmse, gpu.rmse, kRmse[l], c, &r.rmse)) Fail(&v, "RMSE");
  if (!JudgeRatio(npu.max_rel_err, gpu.max_rel_err, kMaxRe[l], c,
                  &r.max_rel_err)) {
    Fail(&v, "max relative error");
  }
  if (!JudgeRatio(npu.mean_rel_err, gpu.mean_rel_err, kMeanRe[l], c,
                  &r.mean_rel_err)) {
    Fail(&v, "mean relative error");
  }
  JudgeRatio(npu.eb, gpu.eb, 2, c, &r.eb);  // reported, not judged
  if (!v.pass) v.message = "benchmark: ratio above threshold: " + v.message;
  if (ratios != nullptr) *ratios = r;
  return v;
}

}  // namespace lockstep
