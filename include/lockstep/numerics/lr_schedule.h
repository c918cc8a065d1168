// Learning-rate schedules that cannot leave their range: lr(step) for an
// int64 step, computed in double, with the semantics of the framework each
// one comes from (docs/schedule.md gives every formula and its source).
//
// Construction, shared by every schedule: a weight w(step) in [0, 1] is
// computed from integers where the formula allows (the fraction k/n of a
// phase, and the remaining fraction (n-k)/n, each one rounding), then
//   lr = std::lerp(min_lr, max_lr, w).
// std::lerp is exact at w = 0 and w = 1 and monotone in w (C++20
// [c.math.lerp]), so lr lies in [min_lr, max_lr] for every step, equals
// min_lr / max_lr exactly where a phase ends or starts, and is monotone
// wherever w is. Cosine phases use cospi.h: 0.5 * (1 + cos(pi p)) is
// evaluated as 0.5 * (1 + CosPi(p)) for p <= 1/2 and as SinPi((1-p)/2)^2
// beyond, with 1 - p computed from integers, so it is exactly 1 at p = 0,
// 1/2 at p = 1/2 and 0 at p = 1, and accurate to a few ulp relative to its
// own (small) value near the end, where 1 + cos loses all digits. One-cycle
// interpolates between its own phase endpoints the same way; piecewise returns
// one of its values.
//
// Past the last step (end_step()), the value at end_step() is held: decay
// schedules stay at min_lr (MindSpore clamps the step the same way; HF's
// cosine would rise again and PyTorch's one-cycle raises). Schedules without
// a last step (restarts, exponential, natural-exp, inverse-time,
// inverse-sqrt) are defined for every step up to INT64_MAX.
//
// Thread safety: ScheduleConfig and LrSchedule are values; At() is const and
// may be called from many threads.
#ifndef LOCKSTEP_NUMERICS_LR_SCHEDULE_H_
#define LOCKSTEP_NUMERICS_LR_SCHEDULE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

enum class ScheduleKind {
  kCosineDecay,     // MindSpore nn.CosineDecayLR
  kCosineRestarts,  // PyTorch CosineAnnealingWarmRestarts (T_0, T_mult)
  kLinearWarmup,    // HF get_linear_schedule_with_warmup
  kCosineWarmup,    // HF get_cosine_schedule_with_warmup (num_cycles)
  kPolynomial,      // HF get_polynomial_decay_schedule_with_warmup
  kExponential,     // MindSpore nn.ExponentialDecayLR (is_stair)
  kNaturalExp,      // MindSpore nn.NaturalExpDecayLR
  kInverseTime,     // MindSpore nn.InverseDecayLR
  kPiecewise,       // MindSpore nn.piecewise_constant_lr
  kOneCycle,        // PyTorch OneCycleLR
  kWsd,             // HF get_wsd_schedule (warmup-stable-decay)
  kInverseSqrt,     // HF get_inverse_sqrt_schedule
  kConstantWarmup,  // HF get_constant_schedule_with_warmup
};

// The shape of a ramp from 1 (start) to 0 (end) over a fraction p in [0,1]:
// linear 1 - p, cosine 0.5 * (1 + cos(pi p)), one-minus-sqrt 1 - sqrt(p).
// A warmup uses the mirrored ramp (0 -> 1), as HF's WSD does.
enum class RampShape { kLinear, kCosine, kOneMinusSqrt };

struct ScheduleConfig {
  ScheduleKind kind = ScheduleKind::kCosineDecay;
  double max_lr = 1e-3;      // peak / base lr: > 0, finite
  double min_lr = 0;         // floor: >= 0, < max_lr (not one-cycle, piecewise)
  int64_t warmup_steps = 0;  // >= 0 (HF schedules)
  // cosine-decay: decay_steps >= 1; exponential, natural-exp, inverse-time:
  // the divisor of the step (>= 1); wsd: length of the decay phase (>= 1).
  int64_t decay_steps = 0;
  // linear-, cosine-warmup, polynomial: HF num_training_steps, > warmup;
  // one-cycle: total_steps >= 2.
  int64_t total_steps = 0;
  int64_t stable_steps = 0;       // wsd, >= 0
  int64_t period = 0;             // cosine-restarts T_0, >= 1
  int64_t period_mult = 1;        // cosine-restarts T_mult, >= 1
  double decay_rate = 0;          // exponential: (0, 1); natural-exp,
                                  // inverse-time: > 0
  bool staircase = false;         // exponential, natural-exp, inverse-time:
                                  // floor(step / decay_steps) (is_stair)
  double power = 1.0;             // polynomial, > 0
  double cycles = 0.5;            // cosine-warmup num_cycles, > 0
  double pct_start = 0.3;         // one-cycle, in (0, 1)
  double div_factor = 25;         // one-cycle: initial = max_lr / div, >= 1
  double final_div_factor = 1e4;  // one-cycle: floor = initial / this, >= 1
  bool three_phase = false;       // one-cycle
  RampShape anneal = RampShape::kCosine;        // one-cycle: cos or linear
  RampShape warmup_shape = RampShape::kLinear;  // wsd
  RampShape decay_shape = RampShape::kCosine;   // wsd
  int64_t timescale = 0;  // inverse-sqrt; 0: warmup_steps, or 10000 if 0
  // piecewise: values[i] holds for boundaries[i-1] <= step < boundaries[i]
  // (boundaries[-1] = 0); the last value holds from the last boundary on.
  // REQUIRES: values.size() == boundaries.size() + 1, boundaries strictly
  // increasing and >= 1, values finite and >= 0.
  std::vector<int64_t> boundaries;
  std::vector<double> values;
};

// "cosine-decay", "cosine-restarts", "linear-warmup", "cosine-warmup",
// "polynomial", "exponential", "natural-exp", "inverse-time", "piecewise",
// "one-cycle", "wsd", "inverse-sqrt", "constant-warmup".
std::string_view ScheduleKindName(ScheduleKind kind);
// InvalidArgument listing the known names for an unknown one.
StatusOr<ScheduleKind> ScheduleKindFromName(std::string_view name);
std::vector<std::string_view> ScheduleKindNames();

// "linear", "cosine", "1-sqrt" (HF's spelling).
std::string_view RampShapeName(RampShape shape);
StatusOr<RampShape> RampShapeFromName(std::string_view name);

// OK, or InvalidArgument naming the schedule, the first bad field and its
// value and why, e.g. "schedule cosine-decay: min_lr 0.5 is not below
// max_lr 0.1". Also refuses NaN/inf anywhere.
Status ValidateSchedule(const ScheduleConfig& config);

// A validated schedule. Thread safety: see the file comment.
class LrSchedule {
 public:
  // Returned by end_step() for schedules that never become constant.
  static constexpr int64_t kNoEnd = -1;

  // Validates (ValidateSchedule) and precomputes.
  static StatusOr<LrSchedule> Create(const ScheduleConfig& config);

  // The learning rate after `step` scheduler steps (step 0 is the first
  // training step, as PyTorch's last_epoch and MindSpore's global_step).
  // Always in [floor(), peak()]. REQUIRES: step >= 0 (checked).
  double At(int64_t step) const;

  // The range every value lies in: [min_lr, max_lr], or for one-cycle
  // [max_lr / div / final_div, max_lr], for piecewise [min, max] of values.
  double floor() const { return floor_; }
  double peak() const { return peak_; }

  // The first step from which At() is constant, or kNoEnd.
  int64_t end_step() const { return end_step_; }

  const ScheduleConfig& config() const { return config_; }

 private:
  explicit LrSchedule(const ScheduleConfig& config);
  double Weighted(double w) const;  // lerp(floor, peak, clamp(w))
  double AtWarmupDecay(int64_t step) const;
  double AtOneCycle(int64_t step) const;
  double AtPiecewise(int64_t step) const;
  double AtWsd(int64_t step) const;

  ScheduleConfig config_;
  double floor_ = 0;
  double peak_ = 0;
  int64_t end_step_ = kNoEnd;
};

// The weight of a ramp from 1 to 0: shape(k / n), with k / n and (n - k) / n
// each rounded once, so it is exactly 1 at k = 0 and exactly 0 at k = n, and
// non-increasing in k. REQUIRES: 0 <= k <= n, n > 0.
double RampDown(RampShape shape, double k, double n);

// The position within cosine-restarts' cycles found with integer arithmetic:
// cycle i (from 0) spans period * period_mult^i steps. Exact for every
// step >= 0 (cycle lengths beyond int64 are held in 128 bits).
struct RestartPosition {
  int64_t cycle = 0;  // i
  int64_t t_cur = 0;  // steps since the cycle began
  double t_i = 0;     // the cycle's length (exact up to 2^53)
  int64_t start = 0;  // the step the cycle began
};
// REQUIRES: step >= 0, period >= 1, period_mult >= 1.
RestartPosition FindRestart(int64_t step, int64_t period, int64_t period_mult);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_LR_SCHEDULE_H_
