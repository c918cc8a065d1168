#include "curve/plot_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lockstep::plot {
namespace {

// The 1/2/5 x 10^k step nearest above raw.
double NiceStep(double raw) {
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw * (1 - 1e-9)) return m * p;
  }
  return 10 * p;
}

}  // namespace

Axis NiceAxis(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) lo = 0, hi = 1;
  if (lo == hi) {
    double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad, hi += pad;
  }
  double step = NiceStep((hi - lo) / std::max(target - 1, 1));
  Axis a;
  a.lo = std::floor(lo / step) * step;
  a.hi = std::ceil(hi / step) * step;
  // Counted, not `t += step` until past hi: far from 0 (steps near 2^62) a
  // step can be below half an ulp of lo, and t would never move. There the
  // ticks may coincide; a repeat is dropped.
  double n = std::clamp(std::round((a.hi - a.lo) / step), 0.0, 1000.0);
  for (int i = 0; i <= static_cast<int>(n); ++i) {
    double t = a.lo + i * step;
    if (std::fabs(t) < step * 1e-9) t = 0;
    if (a.ticks.empty() || t > a.ticks.back()) a.ticks.push_back(t);
  }
  return a;
}

Axis LogAxis(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) lo = 0, hi = 1;
  Axis a;
  a.log = true;
  a.lo = std::floor(lo);
  a.hi = std::max(std::ceil(hi), a.lo + 1);
  int every = std::max(1, static_cast<int>((a.hi - a.lo) / target) + 1);
  bool minor = a.hi - a.lo <= 2;  // few decades: ticks at 2x and 5x too
  for (double t = a.lo; t <= a.hi; t += every) {
    a.ticks.push_back(t);
    if (minor && t < a.hi) {
      a.ticks.push_back(t + std::log10(2.0));
      a.ticks.push_back(t + std::log10(5.0));
    }
  }
  return a;
}

std::string TickLabel(const Axis& a, double t) {
  if (a.log) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", std::pow(10.0, t));
    return buf;
  }
  return Num(t == 0 ? 0 : t);
}

double Frame::X(double v) const {
  return left + (v - x.lo) / (x.hi - x.lo) * width;
}

double Frame::Y(double v) const {
  return top + height - (v - y.lo) / (y.hi - y.lo) * height;
}

}  // namespace lockstep::plot
