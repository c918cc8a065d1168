// LrSchedule: names, validation and construction. The formulas are in
// lr_schedule_eval.cc.
#include "lockstep/numerics/lr_schedule.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace lockstep {
namespace {

struct KindName {
  ScheduleKind kind;
  std::string_view name;
};
constexpr KindName kKindNames[] = {
    {ScheduleKind::kCosineDecay, "cosine-decay"},
    {ScheduleKind::kCosineRestarts, "cosine-restarts"},
    {ScheduleKind::kLinearWarmup, "linear-warmup"},
    {ScheduleKind::kCosineWarmup, "cosine-warmup"},
    {ScheduleKind::kPolynomial, "polynomial"},
    {ScheduleKind::kExponential, "exponential"},
    {ScheduleKind::kNaturalExp, "natural-exp"},
    {ScheduleKind::kInverseTime, "inverse-time"},
    {ScheduleKind::kPiecewise, "piecewise"},
    {ScheduleKind::kOneCycle, "one-cycle"},
    {ScheduleKind::kWsd, "wsd"},
    {ScheduleKind::kInverseSqrt, "inverse-sqrt"},
    {ScheduleKind::kConstantWarmup, "constant-warmup"},
};

// Step counts are bounded so that sums of two or three never overflow.
constexpr int64_t kMaxSteps = int64_t{1} << 62;

std::string Num(double d) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, r.ptr);
}

// Collects the first violated rule as an InvalidArgument.
class Checker {
 public:
  explicit Checker(ScheduleKind kind)
      : subject_("schedule " + std::string(ScheduleKindName(kind))) {}
  Status status() const { return status_; }

  void Fail(const std::string& problem) {
    if (status_.ok()) status_ = Status::InvalidArgument(subject_, problem);
  }
  void Steps(const char* name, int64_t v, int64_t lo) {
    if (v < lo || v > kMaxSteps) {
      Fail(std::string(name) + " " + std::to_string(v) + " must be " +
           (v < lo ? ">= " + std::to_string(lo) : "<= 2^62"));
    }
  }
  // lo < v < hi, or lo <= v / v <= hi where the flags say so.
  void Range(const char* name, double v, double lo, bool lo_in, double hi,
             bool hi_in) {
    bool ok = std::isfinite(v) && (lo_in ? v >= lo : v > lo) &&
              (hi_in ? v <= hi : v < hi);
    if (ok) return;
    std::string want = std::string(lo_in ? "[" : "(") + Num(lo) + ", " +
                       (std::isinf(hi) ? "inf" : Num(hi)) + (hi_in ? "]" : ")");
    Fail(std::string(name) + " " + Num(v) + " must be finite and in " + want);
  }

 private:
  std::string subject_;
  Status status_;
};

constexpr double kInf = HUGE_VAL;

void CheckLrRange(const ScheduleConfig& c, Checker* k) {
  k->Range("max_lr", c.max_lr, 0, false, kInf, false);
  if (c.kind == ScheduleKind::kOneCycle) return;
  k->Range("min_lr", c.min_lr, 0, true, kInf, false);
  if (k->status().ok() && !(c.min_lr < c.max_lr)) {
    k->Fail("min_lr " + Num(c.min_lr) + " is not below max_lr " +
            Num(c.max_lr) + ". Note: a schedule decays from max_lr to min_lr");
  }
}

void CheckPiecewise(const ScheduleConfig& c, Checker* k) {
  if (c.values.size() != c.boundaries.size() + 1) {
    k->Fail("needs one value more than boundaries, got " +
            std::to_string(c.values.size()) + " values and " +
            std::to_string(c.boundaries.size()) + " boundaries");
  }
  for (size_t i = 0; i < c.boundaries.size(); ++i) {
    k->Steps("boundary", c.boundaries[i],
             i == 0 ? 1 : std::min(c.boundaries[i - 1], kMaxSteps) + 1);
  }
  for (double v : c.values) k->Range("value", v, 0, true, kInf, false);
}

void CheckOneCycle(const ScheduleConfig& c, Checker* k) {
  k->Steps("total_steps", c.total_steps, 2);
  k->Range("pct_start", c.pct_start, 0, false, 1, false);
  k->Range("div_factor", c.div_factor, 1, true, kInf, false);
  k->Range("final_div_factor", c.final_div_factor, 1, true, kInf, false);
  if (c.anneal == RampShape::kOneMinusSqrt) {
    k->Fail("anneal 1-sqrt is not a one-cycle strategy (cos or linear)");
  }
  if (!k->status().ok()) return;
  double p = c.pct_start * static_cast<double>(c.total_steps);
  double t = static_cast<double>(c.total_steps);
  bool ok = c.three_phase ? (p - 1 > 0 && t - 1 > 2 * p - 2)
                          : (p - 1 > 0 && t - 1 > p - 1);
  if (!ok) {
    k->Fail(
        "pct_start " + Num(c.pct_start) + " with total_steps " +
        std::to_string(c.total_steps) +
        " leaves a phase of zero or negative length (PyTorch divides by "
        "it). Note: phase ends are pct_start * total_steps - 1" +
        std::string(c.three_phase ? ", 2 * pct_start * total_steps - 2" : "") +
        " and total_steps - 1");
  }
}

void CheckKind(const ScheduleConfig& c, Checker* k) {
  using K = ScheduleKind;
  switch (c.kind) {
    case K::kCosineDecay:
      return k->Steps("decay_steps", c.decay_steps, 1);
    case K::kCosineRestarts:
      k->Steps("period", c.period, 1);
      return k->Steps("period_mult", c.period_mult, 1);
    case K::kLinearWarmup:
    case K::kCosineWarmup:
    case K::kPolynomial:
      k->Steps("warmup_steps", c.warmup_steps, 0);
      k->Steps("total_steps", c.total_steps,
               std::min(c.warmup_steps, kMaxSteps) + 1);
      if (c.kind == K::kCosineWarmup)
        k->Range("cycles", c.cycles, 0, false, kInf, false);
      if (c.kind == K::kPolynomial)
        k->Range("power", c.power, 0, false, kInf, false);
      return;
    case K::kExponential:
      k->Steps("decay_steps", c.decay_steps, 1);
      return k->Range("decay_rate", c.decay_rate, 0, false, 1, true);
    case K::kNaturalExp:
    case K::kInverseTime:
      k->Steps("decay_steps", c.decay_steps, 1);
      return k->Range("decay_rate", c.decay_rate, 0, false, kInf, false);
    case K::kPiecewise:
      return CheckPiecewise(c, k);
    case K::kOneCycle:
      return CheckOneCycle(c, k);
    case K::kWsd:
      k->Steps("warmup_steps", c.warmup_steps, 0);
      k->Steps("stable_steps", c.stable_steps, 0);
      return k->Steps("decay_steps", c.decay_steps, 1);
    case K::kInverseSqrt:
      k->Steps("warmup_steps", c.warmup_steps, 0);
      return k->Steps("timescale", c.timescale, 0);
    case K::kConstantWarmup:
      return k->Steps("warmup_steps", c.warmup_steps, 0);
  }
}

// The first step from which At() no longer changes.
int64_t EndStep(const ScheduleConfig& c) {
  using K = ScheduleKind;
  switch (c.kind) {
    case K::kCosineDecay:
      return c.decay_steps;
    case K::kLinearWarmup:
    case K::kCosineWarmup:
    case K::kPolynomial:
      return c.total_steps;
    case K::kConstantWarmup:
      return c.warmup_steps;
    case K::kWsd:
      return c.warmup_steps + c.stable_steps + c.decay_steps;
    case K::kPiecewise:
      return c.boundaries.empty() ? 0 : c.boundaries.back();
    case K::kOneCycle:
      return c.total_steps - 1;
    default:
      return LrSchedule::kNoEnd;
  }
}

}  // namespace

std::string_view ScheduleKindName(ScheduleKind kind) {
  for (const auto& k : kKindNames)
    if (k.kind == kind) return k.name;
  return "?";
}

StatusOr<ScheduleKind> ScheduleKindFromName(std::string_view name) {
  std::string known;
  for (const auto& k : kKindNames) {
    if (k.name == name) return k.kind;
    known += (known.empty() ? "" : ", ") + std::string(k.name);
  }
  return Status::InvalidArgument("schedule '" + std::string(name) + "'",
                                 "unknown. Note: known schedules: " + known);
}

std::vector<std::string_view> ScheduleKindNames() {
  std::vector<std::string_view> out;
  for (const auto& k : kKindNames) out.push_back(k.name);
  return out;
}

std::string_view RampShapeName(RampShape shape) {
  switch (shape) {
    case RampShape::kLinear:
      return "linear";
    case RampShape::kCosine:
      return "cosine";
    case RampShape::kOneMinusSqrt:
      return "1-sqrt";
  }
  return "?";
}

StatusOr<RampShape> RampShapeFromName(std::string_view name) {
  for (RampShape s :
       {RampShape::kLinear, RampShape::kCosine, RampShape::kOneMinusSqrt}) {
    if (RampShapeName(s) == name) return s;
  }
  if (name == "cos") return RampShape::kCosine;  // PyTorch's spelling
  return Status::InvalidArgument(
      "shape '" + std::string(name) + "'",
      "unknown. Note: known shapes: linear, cosine (or cos), 1-sqrt");
}

Status ValidateSchedule(const ScheduleConfig& c) {
  Checker k(c.kind);
  if (c.kind != ScheduleKind::kPiecewise) CheckLrRange(c, &k);
  CheckKind(c, &k);
  return k.status();
}

StatusOr<LrSchedule> LrSchedule::Create(const ScheduleConfig& config) {
  LOCKSTEP_RETURN_IF_ERROR(ValidateSchedule(config));
  return LrSchedule(config);
}

LrSchedule::LrSchedule(const ScheduleConfig& c) : config_(c) {
  end_step_ = EndStep(c);
  if (c.kind == ScheduleKind::kPiecewise) {
    floor_ = *std::min_element(c.values.begin(), c.values.end());
    peak_ = *std::max_element(c.values.begin(), c.values.end());
  } else if (c.kind == ScheduleKind::kOneCycle) {
    peak_ = c.max_lr;
    floor_ = c.max_lr / c.div_factor / c.final_div_factor;
  } else {
    peak_ = c.max_lr;
    floor_ = c.min_lr;
  }
}

}  // namespace lockstep
