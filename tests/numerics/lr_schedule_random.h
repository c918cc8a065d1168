// Random schedule configurations and step samples for the property and MPFR
// tests: lengths log-uniform up to 2^40, learning rates over 9 decades,
// floors from 0 up to just below the peak.
#ifndef LOCKSTEP_TESTS_NUMERICS_LR_SCHEDULE_RANDOM_H_
#define LOCKSTEP_TESTS_NUMERICS_LR_SCHEDULE_RANDOM_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "lockstep/numerics/lr_schedule.h"

namespace lockstep::testing {

constexpr int64_t kMaxTestStep = int64_t{1} << 40;

class ScheduleSampler {
 public:
  explicit ScheduleSampler(uint64_t seed) : rng_(seed) {}

  double Uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  bool Coin(double p = 0.5) { return Uniform(0, 1) < p; }
  // log-uniform in [1, 2^max_log2].
  int64_t Steps(double max_log2 = 40) {
    return std::max<int64_t>(1, std::llround(std::exp2(Uniform(0, max_log2))));
  }
  RampShape Shape() {
    int i = static_cast<int>(Uniform(0, 3));
    return i == 0   ? RampShape::kLinear
           : i == 1 ? RampShape::kCosine
                    : RampShape::kOneMinusSqrt;
  }

  // A valid configuration of `kind` (retries until ValidateSchedule passes).
  ScheduleConfig Config(ScheduleKind kind) {
    for (;;) {
      ScheduleConfig c = Draw(kind);
      if (ValidateSchedule(c).ok()) return c;
    }
  }

  // Sorted distinct steps: the schedule's phase boundaries and their
  // neighbours, then random steps (log-uniform and uniform) up to 2^40.
  std::vector<int64_t> SampleSteps(const ScheduleConfig& c, int random_count) {
    std::vector<int64_t> s = {0, 1, 2, kMaxTestStep};
    for (int64_t b : {c.warmup_steps, c.decay_steps, c.total_steps,
                      c.total_steps - 1, c.warmup_steps + c.stable_steps,
                      c.warmup_steps + c.stable_steps + c.decay_steps}) {
      for (int64_t d = -2; d <= 2; ++d) s.push_back(b + d);
    }
    for (int64_t b : c.boundaries) s.push_back(b), s.push_back(b - 1);
    for (int i = 0; i < random_count; ++i) {
      s.push_back(Steps());
      s.push_back(static_cast<int64_t>(Uniform(0, 1) * kMaxTestStep));
    }
    std::erase_if(s, [](int64_t v) { return v < 0; });
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    return s;
  }

 private:
  ScheduleConfig Draw(ScheduleKind kind) {
    ScheduleConfig c;
    c.kind = kind;
    c.max_lr = std::pow(10.0, Uniform(-8, 1));
    double r = Uniform(0, 1);
    c.min_lr = Coin(0.3)   ? 0
               : Coin(0.2) ? c.max_lr * (1 - 1e-12)
                           : c.max_lr * r;
    c.warmup_steps = Coin(0.3) ? 0 : Steps(30);
    c.decay_steps = Steps();
    c.total_steps = c.warmup_steps + Steps();
    c.stable_steps = Coin(0.3) ? 0 : Steps(30);
    c.period = Steps(24);
    const int64_t kMults[] = {1, 1, 2, 3, 10, 1000};
    c.period_mult = kMults[static_cast<int>(Uniform(0, 6))];
    c.decay_rate = kind == ScheduleKind::kExponential
                       ? Uniform(0.01, 1.0)
                       : std::pow(10.0, Uniform(-3, 1));
    c.staircase = Coin(0.3);
    c.power = Uniform(0.1, 4);
    c.cycles = Coin(0.7) ? 0.5 : Uniform(0.1, 3);
    c.pct_start = Uniform(0.01, 0.99);
    c.div_factor = Uniform(1, 100);
    c.final_div_factor = std::pow(10.0, Uniform(0, 5));
    c.three_phase = Coin(0.3);
    c.anneal = Coin() ? RampShape::kCosine : RampShape::kLinear;
    c.warmup_shape = Shape();
    c.decay_shape = Shape();
    c.timescale = Coin(0.5) ? 0 : Steps(30);
    int n = static_cast<int>(Uniform(0, 5));
    int64_t b = 0;
    for (int i = 0; i < n; ++i) c.boundaries.push_back(b += Steps(30));
    for (int i = 0; i <= n; ++i)
      c.values.push_back(std::pow(10, Uniform(-8, 1)));
    return c;
  }

  std::mt19937_64 rng_;
};

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_NUMERICS_LR_SCHEDULE_RANDOM_H_
