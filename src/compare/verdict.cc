#include "lockstep/compare/verdict.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <utility>

#include "lockstep/core/status.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace {

void Raise(RowVerdict* v, Verdict level, DivergenceReason reason,
           std::string msg) {
  if (static_cast<int>(level) > static_cast<int>(v->verdict) ||
      (level == v->verdict && v->reason == DivergenceReason::kNone)) {
    v->verdict = level;
    v->reason = reason;
  }
  v->messages.push_back(std::move(msg));
}

std::string Fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

double RelL2Bound(const std::string& a, const std::string& b) {
  return RoundingFloor(a, b);
}

bool StatNonFinite(const PyValue& v) {
  if (v.kind() == PyValue::Kind::kFloat) return !std::isfinite(v.as_double());
  return false;
}

// The largest difference of the four statistics (of those from `first` on:
// 2 for the mean and norm alone) and which one (-1 when none differs):
// max/min/mean relative to the baseline's scale max(|max|, |min|), norm
// relative to its norm.
std::pair<double, int> WorstStatDiff(const OpRow& a, const OpRow& b,
                                     int first = 0) {
  double scale = std::max(std::fabs(b.stats[0].as_double()),
                          std::fabs(b.stats[1].as_double()));
  double worst = 0;
  int worst_k = -1;
  for (int k = first; k < 4; ++k) {
    if (!a.stats[k].is_number() || !b.stats[k].is_number()) continue;
    double d = std::fabs(a.stats[k].as_double() - b.stats[k].as_double());
    double s = k == 3 ? std::fabs(b.stats[3].as_double()) : scale;
    double e = s > 0 ? d / s : (d > 0 ? INFINITY : 0);
    if (e > worst) {
      worst = e;
      worst_k = k;
    }
  }
  return {worst, worst_k};
}

void JudgeStatistics(const MsprobeRow& row, RowVerdict* v) {
  const OpRow& a = *row.npu;
  const OpRow& b = *row.bench;
  bool a_bad = StatNonFinite(a.stats[0]) || StatNonFinite(a.stats[1]);
  bool b_bad = StatNonFinite(b.stats[0]) || StatNonFinite(b.stats[1]);
  if (a_bad && !b_bad) {
    bool has_nan = std::isnan(a.stats[0].as_double()) ||
                   std::isnan(a.stats[1].as_double());
    Raise(v, Verdict::kError,
          has_nan ? DivergenceReason::kNan : DivergenceReason::kOverflow,
          has_nan ? "nan in target, not in baseline"
                  : "inf in target, not in baseline");
    return;
  }
  if (!a.is_tensor || !b.is_tensor || a_bad || b_bad) return;
  double rtol = RelL2Bound(a.dtype, b.dtype);
  static const char* kNames[4] = {"max", "min", "mean", "norm"};
  auto [worst, worst_k] = WorstStatDiff(a, b);
  if (worst_k < 0 || worst <= rtol) return;
  std::string msg = std::string(kNames[worst_k]) + " differs by " + Fmt(worst) +
                    " (relative to scale), bound " + Fmt(rtol);
  Raise(v, worst > 10 * rtol ? Verdict::kError : Verdict::kWarning,
        DivergenceReason::kPrecision, msg);
}

void JudgeTensor(const MsprobeRow& row, const TensorPairFacts& f,
                 RowVerdict* v) {
  if (f.unreadable || f.data_missing) {
    Raise(v, Verdict::kError, DivergenceReason::kMissing,
          f.unreadable ? "tensor file unreadable"
                       : "tensor file on one side only");
    return;
  }
  if (f.file_mismatch) {
    Raise(v, Verdict::kError, DivergenceReason::kShape,
          "a tensor file's shape differs from its dump.json entry's");
    return;
  }
  if (f.shape_mismatch) {
    Raise(v, Verdict::kError, DivergenceReason::kShape, "shape differs");
    return;
  }
  if (f.nonfinite_mismatch) {
    bool extra = f.target_nonfinite > f.baseline_nonfinite;
    Raise(v, Verdict::kError,
          extra ? DivergenceReason::kNan : DivergenceReason::kPrecision,
          "inf/nan positions differ (target " +
              std::to_string(f.target_nonfinite) + ", baseline " +
              std::to_string(f.baseline_nonfinite) + ")");
    return;
  }
  if (!f.compared) return;
  double c = f.cosine, e = f.max_abs_err;
  bool cos_ok = !std::isnan(c);
  if ((cos_ok && c < 0.99 && e > 0.001) || (cos_ok && c < 0.9) || e > 1 ||
      std::isnan(e)) {
    Raise(v, Verdict::kError, DivergenceReason::kPrecision,
          "cosine " + (cos_ok ? Fmt(c) : std::string("n/a")) +
              ", max abs err " + Fmt(e));
    return;
  }
  double bound = RelL2Bound(row.npu->dtype, row.bench->dtype);
  if (!std::isnan(f.rel_l2_err) && f.rel_l2_err > bound) {
    Raise(v, Verdict::kWarning, DivergenceReason::kPrecision,
          "relative L2 error " + Fmt(f.rel_l2_err) + " > " + Fmt(bound) +
              " (1 - cosine " + Fmt(f.one_minus_cos) + ", max abs err " +
              Fmt(e) + ")");
  }
}

}  // namespace

RowVerdict JudgeRow(CompareMode mode, const MsprobeRow& row,
                    const TensorPairFacts* facts) {
  RowVerdict v;
  if (row.bench == nullptr) {
    v.verdict = Verdict::kUnmatched;
    v.reason = DivergenceReason::kMissing;
    v.messages.push_back("no baseline row matched");
    return v;
  }
  const OpRow& a = *row.npu;
  const OpRow& b = *row.bench;
  if (a.shape != b.shape)
    Raise(&v, Verdict::kError, DivergenceReason::kShape,
          "shape " + Abbreviate(a.shape) + " vs " + Abbreviate(b.shape));
  if (!SameDtype(a.dtype, b.dtype))
    Raise(&v, Verdict::kWarning, DivergenceReason::kDtype,
          "dtype " + Abbreviate(a.dtype) + " vs " + Abbreviate(b.dtype));
  if (!a.is_tensor && !a.is_null && !PyEquals(a.stats[0], b.stats[0])) {
    if (a.is_device && b.is_device) {
      // GPU vs NPU, CPU vs GPU: the runs are on different devices.
      v.messages.push_back("device " + Abbreviate(a.stats[0].PyStr()) + " vs " +
                           Abbreviate(b.stats[0].PyStr()) +
                           " (runs on different devices: not a divergence)");
    } else {
      Raise(&v, Verdict::kError, DivergenceReason::kPrecision,
            "value " + Abbreviate(a.stats[0].PyStr()) + " vs " +
                Abbreviate(b.stats[0].PyStr()));
    }
  }
  if (mode == CompareMode::kMd5) {
    if (row.metrics[0].str != row.metrics[1].str) {
      Raise(&v, Verdict::kError, DivergenceReason::kPrecision,
            "CRC-32 differs");
    }
  } else if (mode == CompareMode::kStatistics || facts == nullptr) {
    JudgeStatistics(row, &v);
  } else {
    JudgeTensor(row, *facts, &v);
  }
  if (!row.metric_message.empty()) v.messages.push_back(row.metric_message);
  for (const auto& m : row.err_messages) v.messages.push_back("msprobe " + m);
  return v;
}

double DTypeFloor(const std::string& dtype) {
  auto has = [&](const char* d) { return dtype.find(d) != std::string::npos; };
  constexpr double kFp32 = 0x1p-17;  // 128 u: sums of ~16k terms, sqrt growth
  if (has("bfloat16") || has("BFloat16")) return 0x1p-7;  // 2 u
  if (has("float16") || has("Float16") || has("half")) return 0x1p-10;
  if (has("float8_e4m3") || has("Float8E4M3")) return 0x1p-3;
  if (has("float8_e5m2") || has("Float8E5M2")) return 0x1p-2;
  if (has("float64") || has("Float64") || has("double") ||
      dtype == "<class 'float'>") {
    return 0x1p-46;  // 128 u of double
  }
  if (has("float") || has("Float") || has("complex")) return kFp32;
  return 0;  // integers, bool, strings: exact
}

std::string NormalizedDtype(std::string_view d) {
  if (d.starts_with("torch.")) d.remove_prefix(6);
  std::string out(d);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool SameDtype(std::string_view a, std::string_view b) {
  return a == b || NormalizedDtype(a) == NormalizedDtype(b);
}

double RoundingFloor(const std::string& a, const std::string& b) {
  return std::max(DTypeFloor(a), DTypeFloor(b));
}

namespace {

// |a - b| / |b|; 0 for equal values (infinities and NaNs included), and
// infinite where one side is infinite or NaN and the other is not (-inf
// against -1e4 as masked_fill's value: a changed argument).
double RelDiff(double a, double b) {
  if (a == b || (std::isnan(a) && std::isnan(b))) return 0;
  double d = std::fabs(a - b);
  double s = std::fabs(b);
  if (!std::isfinite(d) || !std::isfinite(s)) return INFINITY;
  return s > 0 ? d / s : INFINITY;
}

// The statistics' estimate of the relative error (WorstStatDiff from
// statistic `first` on).
double StatsError(const OpRow& a, const OpRow& b, int first) {
  bool a_bad = StatNonFinite(a.stats[0]) || StatNonFinite(a.stats[1]);
  bool b_bad = StatNonFinite(b.stats[0]) || StatNonFinite(b.stats[1]);
  if (a_bad != b_bad) return INFINITY;
  if (a_bad) return 0;  // both non-finite: nothing to tell them apart
  if (!a.stats[0].is_number() || !b.stats[0].is_number()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return WorstStatDiff(a, b, first).first;
}

double TensorError(const TensorPairFacts& f) {
  if (f.shape_mismatch || f.nonfinite_mismatch || f.file_mismatch)
    return INFINITY;
  if (!f.compared) return std::numeric_limits<double>::quiet_NaN();
  return f.rel_l2_err;
}

}  // namespace

RowError EstimateRowError(CompareMode mode, const MsprobeRow& row,
                          const TensorPairFacts* facts) {
  RowError e;
  if (row.bench == nullptr) return e;
  const OpRow& a = *row.npu;
  const OpRow& b = *row.bench;
  e.floor = RoundingFloor(a.dtype, b.dtype);
  if (a.is_null || b.is_null) {
    e.error = a.is_null == b.is_null ? 0 : INFINITY;
  } else if (!a.is_tensor || !b.is_tensor) {
    if (a.is_tensor != b.is_tensor) {
      e.error = INFINITY;
    } else if (a.is_device && b.is_device) {
      e.error = 0;  // runs on different devices (JudgeRow)
    } else if (a.stats[0].is_number() && b.stats[0].is_number()) {
      e.error = RelDiff(a.stats[0].as_double(), b.stats[0].as_double());
    } else {
      e.error = PyEquals(a.stats[0], b.stats[0]) ? 0 : INFINITY;
    }
  } else if (a.shape != b.shape) {
    e.error = INFINITY;
  } else if (mode == CompareMode::kMd5) {
    e.error = a.md5 == b.md5 ? 0 : INFINITY;
  } else if (double tensor = mode == CompareMode::kTensor && facts != nullptr
                                 ? TensorError(*facts)
                                 : std::numeric_limits<double>::quiet_NaN();
             !std::isnan(tensor)) {
    e.error = tensor;
  } else {
    // Statistics mode, and tensors that tensor mode does not compare
    // (msprobe's "unsupported": a 0-dimensional one, whose statistics are
    // its value).
    // A max or a min is one element, which two kernels can round a whole
    // ulp apart (up to 4 u where it crosses a power of two).
    e.error = StatsError(a, b, 0);
    e.aggregate_error = StatsError(a, b, 2);
    e.floor *= 2;
    return e;
  }
  e.aggregate_error = e.error;
  return e;
}

}  // namespace lockstep
