#include "lockstep/numerics/replay_error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "lockstep/core/check.h"
#include "lockstep/numerics/ulp.h"

namespace lockstep {
namespace {

constexpr double kNoBound = std::numeric_limits<double>::infinity();

// The largest finite |R(ref)| of the tensor (0 when none is finite).
double TensorMax(const double* ref, size_t n, DType t) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    double r = std::fabs(RoundToFormat(ref[i], t));
    if (std::isfinite(r)) m = std::max(m, r);
  }
  return m;
}

// Unit roundoff 2^-p of format t.
double UnitRoundoff(DType t) { return std::ldexp(1.0, -FormatOf(t).precision); }

// What a kernel accumulates t in: fp32 for the 16-bit formats.
DType AccumulationType(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 ? DType::kFloat32 : t;
}

}  // namespace

std::string ReplayNumber(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

ReplayError MeasureReplayError(const double* rec, const double* ref,
                               const double* scale, size_t n, DType t,
                               ReplayScale mode) {
  LOCKSTEP_CHECK(IsFloatingPoint(t));
  ReplayError err;
  err.count = n;
  double tensor_max =
      mode == ReplayScale::kTensorMax ? TensorMax(ref, n, t) : 0;
  for (size_t i = 0; i < n; ++i) {
    double r = RoundToFormat(ref[i], t);
    double e;
    if (std::isnan(rec[i]) || std::isnan(r)) {
      e = std::isnan(rec[i]) && std::isnan(r) ? 0 : kNoBound;
    } else if (std::isinf(rec[i]) || std::isinf(r)) {
      e = rec[i] == r ? 0 : kNoBound;
    } else {
      double s = std::fabs(r);
      if (mode == ReplayScale::kAbsInputs && scale != nullptr &&
          std::isfinite(scale[i])) {
        s = std::max(s, std::fabs(scale[i]));
      } else if (mode == ReplayScale::kTensorMax) {
        s = std::max(s, tensor_max);
      }
      // Below the smallest normal number, in units of it: a kernel that
      // flushes subnormal results to zero is not a suspect.
      double min_normal = std::ldexp(1.0, FormatOf(t).min_exponent);
      if (s < min_normal && std::fabs(rec[i]) < min_normal) {
        e = std::fabs(rec[i] - r) / min_normal;
      } else {
        e = rec[i] == r ? 0 : std::fabs(rec[i] - r) / Ulp(s, t);
      }
    }
    if (e == kNoBound) ++err.nonfinite_mismatch;
    if (ref[i] != 0 && std::isfinite(ref[i]) && std::isfinite(rec[i])) {
      err.max_rel =
          std::max(err.max_rel, std::fabs(rec[i] - ref[i]) / std::fabs(ref[i]));
    }
    if (i == 0 || e > err.max_ulp) {
      err.max_ulp = e;
      err.worst = i;
      err.worst_recorded = rec[i];
      err.worst_reference = ref[i];
    }
  }
  return err;
}

ReplayBound ReplayErrorBound(ReplayOpKind kind, double elementwise_ulps,
                             int64_t k, DType t, bool backward) {
  LOCKSTEP_CHECK(IsFloatingPoint(t));
  k = std::max<int64_t>(k, 1);
  bool narrow = t == DType::kFloat16 || t == DType::kBFloat16;
  double ratio = UnitRoundoff(AccumulationType(t)) / UnitRoundoff(t);
  ReplayBound b;
  switch (kind) {
    case ReplayOpKind::kElementwise:
      b.ulps = narrow ? std::min(elementwise_ulps, 2.0) : elementwise_ulps;
      b.rule = "elementwise: " + ReplayNumber(b.ulps) + " ulp";
      break;
    case ReplayOpKind::kAccumulation:
      b.ulps = static_cast<double>(k) * ratio + 1;
      b.rule = "sum of " + std::to_string(k) +
               " terms: " + ReplayNumber(b.ulps) + " ulp of the sum of |terms|";
      break;
    case ReplayOpKind::kNormalization:
      b.ulps = static_cast<double>(k + 8) * ratio + 2;
      b.rule = "normalisation over " + std::to_string(k) +
               " values: " + ReplayNumber(b.ulps) +
               " ulp of the tensor's largest value";
      break;
  }
  if (t == DType::kFloat64) {
    b.ulps = 2 * b.ulps + 2;
    b.rule += ", doubled + 2 (float64: the reference is no more precise)";
  }
  if (backward) {
    b.ulps += 1;
    b.rule += ", + 1 for the gradient's product";
  }
  return b;
}

}  // namespace lockstep
