#include "lockstep/numerics/cospi.h"

#include <cmath>
#include <limits>

namespace lockstep {
namespace {

constexpr double kPi = 3.141592653589793;

// sin(pi * a) for a in [0, 1], folded to an argument in [0, 1/4].
double SinPiFolded(double a) {
  if (a <= 0.25) return std::sin(kPi * a);
  if (a < 0.75) return std::cos(kPi * (0.5 - a));  // 0.5 - a is exact
  return std::sin(kPi * (1.0 - a));                // 1 - a is exact
}

}  // namespace

double CosPi(double x) {
  if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
  double a = std::fabs(std::remainder(x, 2.0));  // exact, in [0, 1]
  if (a <= 0.25) return std::cos(kPi * a);
  if (a < 0.75) return std::sin(kPi * (0.5 - a));  // exact difference
  return -std::cos(kPi * (1.0 - a));               // exact difference
}

double SinPi(double x) {
  if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
  double r = std::remainder(x, 2.0);  // exact, in [-1, 1]
  return std::copysign(SinPiFolded(std::fabs(r)), r);
}

}  // namespace lockstep
