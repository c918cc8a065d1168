#include "lockstep/numerics/ulp.h"

#include <cfloat>
#include <cmath>

#include "lockstep/core/check.h"
#include "lockstep/numerics/half.h"

namespace lockstep {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Exponent of the binade of finite nonzero x, clamped below at emin (so that
// subnormals share the quantum of the smallest normal binade).
int BinadeExponent(double x, const FloatFormat& f) {
  return std::max(std::ilogb(x), f.min_exponent);
}

// Ordered index of a finite value of the format: 0 for +-0, k for the k-th
// positive value, -k for its negation. Consecutive values differ by 1.
int64_t OrderedIndex(double x, const FloatFormat& f) {
  if (x == 0) return 0;
  int e = BinadeExponent(x, f);
  double m = std::ldexp(std::fabs(x), f.precision - 1 - e);  // exact integer
  int64_t idx = static_cast<int64_t>(e - f.min_exponent) *
                    (int64_t{1} << (f.precision - 1)) +
                static_cast<int64_t>(m);
  return std::signbit(x) ? -idx : idx;
}

int64_t MaxIndex(const FloatFormat& f) { return OrderedIndex(f.max_finite, f); }

// Inverse of OrderedIndex; indices beyond the largest finite value give inf.
double FromOrderedIndex(int64_t idx, const FloatFormat& f) {
  int64_t mag = idx < 0 ? -idx : idx;
  double sign = idx < 0 ? -1.0 : 1.0;
  if (mag > MaxIndex(f)) return sign * kInfinity;
  const int64_t half = int64_t{1} << (f.precision - 1);
  int64_t binade = mag < half ? 0 : (mag >> (f.precision - 1)) - 1;
  int64_t m = mag - binade * half;
  int e = f.min_exponent + static_cast<int>(binade);
  return sign * std::ldexp(static_cast<double>(m), e - f.precision + 1);
}

// Index of any value of the format, +-inf included (one past +-max).
int64_t IndexWithInf(double x, const FloatFormat& f) {
  if (std::isinf(x)) return x > 0 ? MaxIndex(f) + 1 : -MaxIndex(f) - 1;
  return OrderedIndex(x, f);
}

}  // namespace

FloatFormat FormatOf(DType t) {
  switch (t) {
    case DType::kFloat16:
      return {11, -14, 15, kHalfMax};
    case DType::kBFloat16:
      return {8, -126, 127, kBFloat16Max};
    case DType::kFloat32:
      return {24, -126, 127, static_cast<double>(FLT_MAX)};
    case DType::kFloat64:
      return {53, -1022, 1023, DBL_MAX};
    default:
      LOCKSTEP_CHECK(IsFloatingPoint(t));
      return {};
  }
}

double Ulp(double x, DType t) {
  FloatFormat f = FormatOf(t);
  if (std::isnan(x)) return x;
  int e = f.max_exponent;
  if (x == 0) {
    e = f.min_exponent;
  } else if (!std::isinf(x)) {
    e = std::min(BinadeExponent(x, f), f.max_exponent);
  }
  return std::ldexp(1.0, e - f.precision + 1);
}

double RoundToFormat(double x, DType t, int sticky) {
  if (!std::isfinite(x) || x == 0) return x;
  FloatFormat f = FormatOf(t);
  int e = BinadeExponent(x, f);
  double m = std::ldexp(x, f.precision - 1 - e);  // exact: a power-of-2 scale
  double r = std::nearbyint(m);                   // ties to even
  if (std::fabs(m - std::trunc(m)) == 0.5 && sticky != 0) {
    r = sticky > 0 ? std::ceil(m) : std::floor(m);
  }
  double out = std::ldexp(r, e - f.precision + 1);
  if (std::fabs(out) > f.max_finite) return std::copysign(kInfinity, x);
  return out == 0 ? std::copysign(0.0, x) : out;
}

double UlpError(double result, double exact, DType t) {
  bool rn = std::isnan(result), en = std::isnan(exact);
  if (rn || en) return rn && en ? 0.0 : kInfinity;
  if (std::isinf(result) || std::isinf(exact)) {
    return result == RoundToFormat(exact, t) ? 0.0 : kInfinity;
  }
  return std::fabs(result - exact) / Ulp(exact, t);
}

int64_t UlpDistance(double a, double b, DType t) {
  bool an = std::isnan(a), bn = std::isnan(b);
  if (an || bn) return an && bn ? 0 : kUlpDistanceNaN;
  FloatFormat f = FormatOf(t);
  LOCKSTEP_DCHECK(RoundToFormat(a, t) == a && RoundToFormat(b, t) == b);
  int64_t d = IndexWithInf(a, f) - IndexWithInf(b, f);
  return d < 0 ? -d : d;
}

double StepUlps(double x, int64_t steps, DType t) {
  if (std::isnan(x)) return x;
  FloatFormat f = FormatOf(t);
  return FromOrderedIndex(IndexWithInf(x, f) + steps, f);
}

}  // namespace lockstep
