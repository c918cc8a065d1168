// LrSchedule::At: the formulas, each a weight in [0, 1] fed to std::lerp.
// See lr_schedule.h for why this keeps every value in range, and
// docs/schedule.md for each formula's source.
#include <algorithm>
#include <cmath>

#include "lockstep/core/check.h"
#include "lockstep/numerics/cospi.h"
#include "lockstep/numerics/lr_schedule.h"

namespace lockstep {
namespace {

using K = ScheduleKind;

double D(int64_t v) { return static_cast<double>(v); }
double Square(double x) { return x * x; }

// decay_rate ^ (step / decay_steps) as rate^q * rate^(r / n) with
// step = q n + r: the rounding of step / n is confined to the fraction, so
// the error does not grow with the step.
double ExponentialWeight(const ScheduleConfig& c, int64_t step) {
  int64_t q = step / c.decay_steps, r = step % c.decay_steps;
  double w = std::pow(c.decay_rate, D(q));
  if (c.staircase || r == 0) return w;
  return w * std::pow(c.decay_rate, D(r) / D(c.decay_steps));
}

// step / decay_steps, or its floor for staircase schedules.
double DecayExponent(const ScheduleConfig& c, int64_t step) {
  if (c.staircase) return D(step / c.decay_steps);
  return D(step) / D(c.decay_steps);
}

double InverseSqrtWeight(const ScheduleConfig& c, int64_t step) {
  int64_t ts = c.timescale > 0      ? c.timescale
               : c.warmup_steps > 0 ? c.warmup_steps
                                    : 10000;
  // HF: 1 / sqrt((step + shift) / timescale), shift = timescale - warmup;
  // step >= warmup here, so the sum is >= timescale > 0.
  __int128 sum = static_cast<__int128>(step) + ts - c.warmup_steps;
  return 1.0 / std::sqrt(static_cast<double>(sum) / D(ts));
}

}  // namespace

double RampDown(RampShape shape, double k, double n) {
  double p = k / n;        // fraction done
  double q = (n - k) / n;  // fraction remaining, rounded once
  switch (shape) {
    case RampShape::kLinear:
      return q;
    case RampShape::kCosine:
      // 0.5 * (1 + cos(pi p)) as written while cos(pi p) >= 0 (exactly
      // 1 at p = 0 and 1/2 at p = 1/2); beyond, sin^2(pi q / 2), which
      // keeps its relative accuracy as q -> 0 where 1 + cos cancels.
      return p <= 0.5 ? 0.5 * (1.0 + CosPi(p)) : Square(SinPi(0.5 * q));
    case RampShape::kOneMinusSqrt:
      // 1 - sqrt(p) = q / (1 + sqrt(p)), without cancellation.
      return q / (1.0 + std::sqrt(p));
  }
  return 0;
}

RestartPosition FindRestart(int64_t step, int64_t period, int64_t mult) {
  LOCKSTEP_CHECK(step >= 0 && period >= 1 && mult >= 1);
  RestartPosition r;
  if (mult == 1) {
    r.cycle = step / period;
    r.start = r.cycle * period;
  } else {
    // Cycle lengths grow geometrically: at most 63 iterations. A length
    // may pass 2^63 (the cycle then holds every remaining step).
    unsigned __int128 len = static_cast<unsigned __int128>(period);
    while (static_cast<unsigned __int128>(step - r.start) >= len) {
      r.start += static_cast<int64_t>(len);
      len *= static_cast<unsigned __int128>(mult);
      ++r.cycle;
    }
    r.t_cur = step - r.start;
    r.t_i = static_cast<double>(len);
    return r;
  }
  r.t_cur = step - r.start;
  r.t_i = D(period);
  return r;
}

double LrSchedule::Weighted(double w) const {
  return std::lerp(floor_, peak_, std::clamp(w, 0.0, 1.0));
}

double LrSchedule::At(int64_t step) const {
  LOCKSTEP_CHECK(step >= 0);
  const ScheduleConfig& c = config_;
  switch (c.kind) {
    case K::kCosineDecay: {
      int64_t s = std::min(step, c.decay_steps);
      return Weighted(RampDown(RampShape::kCosine, D(s), D(c.decay_steps)));
    }
    case K::kCosineRestarts: {
      RestartPosition r = FindRestart(step, c.period, c.period_mult);
      return Weighted(RampDown(RampShape::kCosine, D(r.t_cur), r.t_i));
    }
    case K::kExponential:
      return Weighted(ExponentialWeight(c, step));
    case K::kNaturalExp:
      return Weighted(std::exp(-c.decay_rate * DecayExponent(c, step)));
    case K::kInverseTime:
      return Weighted(1.0 / (1.0 + c.decay_rate * DecayExponent(c, step)));
    case K::kPiecewise:
      return AtPiecewise(step);
    case K::kOneCycle:
      return AtOneCycle(step);
    case K::kWsd:
      return AtWsd(step);
    case K::kInverseSqrt:
      if (step < c.warmup_steps) return Weighted(D(step) / D(c.warmup_steps));
      return Weighted(InverseSqrtWeight(c, step));
    default:
      return AtWarmupDecay(step);
  }
}

// HF's linear, cosine, polynomial and constant schedules with warmup.
double LrSchedule::AtWarmupDecay(int64_t step) const {
  const ScheduleConfig& c = config_;
  if (step < c.warmup_steps) return Weighted(D(step) / D(c.warmup_steps));
  if (c.kind == K::kConstantWarmup) return peak_;
  double k = D(std::min(step, c.total_steps) - c.warmup_steps);
  double n = D(c.total_steps - c.warmup_steps);
  switch (c.kind) {
    case K::kLinearWarmup:
      return Weighted(RampDown(RampShape::kLinear, k, n));
    case K::kPolynomial:
      return Weighted(std::pow(RampDown(RampShape::kLinear, k, n), c.power));
    default:  // kCosineWarmup
      if (c.cycles == 0.5) return Weighted(RampDown(RampShape::kCosine, k, n));
      // 0.5 * (1 + cos(2 pi cycles p)) = cos^2(pi cycles p)
      return Weighted(Square(CosPi(c.cycles * (k / n))));
  }
}

double LrSchedule::AtWsd(int64_t step) const {
  const ScheduleConfig& c = config_;
  int64_t stable_end = c.warmup_steps + c.stable_steps;
  if (step < c.warmup_steps) {  // the mirrored ramp: 0 -> 1
    return Weighted(
        RampDown(c.warmup_shape, D(c.warmup_steps - step), D(c.warmup_steps)));
  }
  if (step < stable_end) return peak_;
  if (step >= stable_end + c.decay_steps) return floor_;
  return Weighted(
      RampDown(c.decay_shape, D(step - stable_end), D(c.decay_steps)));
}

double LrSchedule::AtPiecewise(int64_t step) const {
  const auto& b = config_.boundaries;
  size_t i = std::upper_bound(b.begin(), b.end(), step) - b.begin();
  return config_.values[i];
}

// PyTorch OneCycleLR._get_lr: phases end at (float) pct_start * total - 1,
// [2 * pct_start * total - 2,] total - 1; the fraction of the current phase
// is clamped to [0, 1] (PyTorch raises past total_steps instead).
double LrSchedule::AtOneCycle(int64_t step) const {
  const ScheduleConfig& c = config_;
  double initial = c.max_lr / c.div_factor;
  double p = c.pct_start * D(c.total_steps);
  double t = D(c.total_steps) - 1;
  struct Phase {
    double end, from, to;
  };
  Phase two[] = {{p - 1, initial, c.max_lr}, {t, c.max_lr, floor_}};
  Phase three[] = {{p - 1, initial, c.max_lr},
                   {2 * p - 2, c.max_lr, initial},
                   {t, initial, floor_}};
  const Phase* ph = c.three_phase ? three : two;
  int count = c.three_phase ? 3 : 2;
  double s = D(step), start = 0;
  int i = 0;
  while (i < count - 1 && s > ph[i].end) start = ph[i++].end;
  double n = ph[i].end - start;
  double k = std::clamp(s - start, 0.0, n);
  const Phase& f = ph[i];
  if (f.from < f.to) {  // rising: the mirrored ramp
    return std::lerp(f.from, f.to, RampDown(c.anneal, n - k, n));
  }
  return std::lerp(f.to, f.from, RampDown(c.anneal, k, n));
}

}  // namespace lockstep
