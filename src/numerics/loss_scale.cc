#include "lockstep/numerics/loss_scale.h"

#include <cmath>
#include <string>
#include <utility>

#include "lockstep/core/check.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace {

Status Bad(std::string_view name, const std::string& value,
           std::string_view problem) {
  return Status::InvalidArgument(std::string(name) + " " + value, problem);
}

Status BadDouble(std::string_view name, double v, std::string_view problem) {
  return Bad(name, PyFloatRepr(v), problem);
}

bool PositiveFinite(double v) { return std::isfinite(v) && v > 0; }

Status ValidateScales(const LossScaleOptions& o) {
  if (!PositiveFinite(o.min_scale)) {
    return BadDouble("min_scale", o.min_scale, "must be finite and > 0");
  }
  if (!PositiveFinite(o.max_scale)) {
    return BadDouble("max_scale", o.max_scale, "must be finite and > 0");
  }
  if (o.min_scale > o.max_scale) {
    return BadDouble("min_scale", o.min_scale,
                     "must be <= max_scale " + PyFloatRepr(o.max_scale));
  }
  if (!PositiveFinite(o.init_scale)) {
    return BadDouble("init_scale", o.init_scale, "must be finite and > 0");
  }
  if (o.init_scale < o.min_scale || o.init_scale > o.max_scale) {
    return BadDouble("init_scale", o.init_scale,
                     "must be in [min_scale, max_scale] = [" +
                         PyFloatRepr(o.min_scale) + ", " +
                         PyFloatRepr(o.max_scale) + "]");
  }
  return Status::Ok();
}

Status ValidateDynamics(const LossScaleOptions& o) {
  if (!(std::isfinite(o.growth_factor) && o.growth_factor > 1)) {
    return BadDouble("growth_factor", o.growth_factor,
                     "must be finite and > 1");
  }
  if (!(o.backoff_factor > 0 && o.backoff_factor < 1)) {
    return BadDouble("backoff_factor", o.backoff_factor, "must be in (0, 1)");
  }
  if (o.growth_interval < 1) {
    return Bad("growth_interval", std::to_string(o.growth_interval),
               "must be >= 1");
  }
  if (o.hysteresis < 1) {
    return Bad("hysteresis", std::to_string(o.hysteresis), "must be >= 1");
  }
  if (o.fail_after_consecutive_overflows < 0) {
    return Bad("fail_after_consecutive_overflows",
               std::to_string(o.fail_after_consecutive_overflows),
               "must be >= 0 (0 = never)");
  }
  bool no_hysteresis =
      o.rule == LossScaleRule::kPyTorch || o.rule == LossScaleRule::kMindSpore;
  if (no_hysteresis && o.hysteresis != 1) {
    return Bad("hysteresis", std::to_string(o.hysteresis),
               std::string("the ") + std::string(LossScaleRuleName(o.rule)) +
                   " rule has no hysteresis. Note: use 1, or the deepspeed "
                   "or megatron rule");
  }
  return Status::Ok();
}

struct NamedPreset {
  std::string_view name;
  LossScaleOptions (*make)();
};

LossScaleOptions PyTorchPreset() { return LossScaleOptions(); }

LossScaleOptions MindSporePreset() {
  LossScaleOptions o;
  o.rule = LossScaleRule::kMindSpore;
  o.init_scale = 16777216.0;  // 2^24
  o.growth_interval = 2000;
  o.min_scale = 1.0;
  o.fail_after_consecutive_overflows = 1001;  // bad_step > bad_step_max 1000
  return o;
}

LossScaleOptions MindSporeFixedPreset() {
  LossScaleOptions o;
  o.rule = LossScaleRule::kMindSpore;
  o.init_scale = 128.0;
  o.min_scale = 1.0;
  o.dynamic = false;
  o.drop_overflow_update = true;
  return o;
}

LossScaleOptions DeepSpeedPreset() {
  LossScaleOptions o;
  o.rule = LossScaleRule::kDeepSpeed;
  o.init_scale = 65536.0;  // initial_scale_power 16
  o.growth_interval = 1000;
  o.hysteresis = 2;
  o.min_scale = 1.0;
  o.fail_on_overflow_at_min_scale = true;  // raise_error_at_min_scale
  return o;
}

LossScaleOptions MegatronPreset() {
  LossScaleOptions o;
  o.rule = LossScaleRule::kMegatron;
  o.init_scale = 4294967296.0;  // 2^32
  o.growth_interval = 1000;
  o.hysteresis = 2;
  o.min_scale = 1.0;
  return o;
}

constexpr NamedPreset kPresets[] = {
    {"pytorch", PyTorchPreset},
    {"mindspore", MindSporePreset},
    {"mindspore-fixed", MindSporeFixedPreset},
    {"deepspeed", DeepSpeedPreset},
    {"megatron", MegatronPreset},
};

}  // namespace

std::string_view LossScaleRuleName(LossScaleRule rule) {
  switch (rule) {
    case LossScaleRule::kPyTorch:
      return "pytorch";
    case LossScaleRule::kDeepSpeed:
      return "deepspeed";
    case LossScaleRule::kMegatron:
      return "megatron";
    case LossScaleRule::kMindSpore:
      return "mindspore";
  }
  return "unknown";
}

Status LossScaleState::Validate(const LossScaleOptions& options) {
  LOCKSTEP_RETURN_IF_ERROR(ValidateScales(options));
  return ValidateDynamics(options);
}

std::vector<std::string_view> LossScaleState::PresetNames() {
  std::vector<std::string_view> names;
  for (const NamedPreset& p : kPresets) names.push_back(p.name);
  return names;
}

StatusOr<LossScaleOptions> LossScaleState::Preset(std::string_view name) {
  std::string known;
  for (const NamedPreset& p : kPresets) {
    if (p.name == name) return p.make();
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  }
  return Status::InvalidArgument(
      "loss scale preset '" + std::string(name) + "'",
      "unknown. Note: known presets are " + known);
}

LossScaleState::LossScaleState(LossScaleOptions options)
    : options_(std::move(options)),
      scale_(options_.init_scale),
      hysteresis_left_(options_.hysteresis) {
  LOCKSTEP_CHECK(Validate(options_).ok());
}

bool LossScaleState::Update(bool found_inf) {
  last_event_ = LossScaleEvent::kNone;
  consecutive_overflows_ = found_inf ? consecutive_overflows_ + 1 : 0;
  bool applied = !found_inf;
  if (!options_.dynamic) {
    applied = !found_inf || !options_.drop_overflow_update;
  } else {
    switch (options_.rule) {
      case LossScaleRule::kPyTorch:
        UpdatePyTorch(found_inf);
        break;
      case LossScaleRule::kDeepSpeed:
        UpdateDeepSpeed(found_inf);
        break;
      case LossScaleRule::kMegatron:
        UpdateMegatron(found_inf);
        break;
      case LossScaleRule::kMindSpore:
        UpdateMindSpore(found_inf);
        break;
    }
  }
  int64_t k = options_.fail_after_consecutive_overflows;
  if (k > 0 && consecutive_overflows_ == k) {
    Fail(std::to_string(k) +
         " consecutive overflows (fail_after_consecutive_overflows)");
  }
  if (found_inf) last_overflow_iter_ = iter_;
  ++iter_;
  if (!applied) ++total_skipped_;
  return applied;
}

void LossScaleState::UpdatePyTorch(bool found_inf) {
  if (found_inf) {
    BackOff();
    growth_tracker_ = 0;
    return;
  }
  if (++growth_tracker_ == options_.growth_interval) {
    growth_tracker_ = 0;
    Grow();
  }
}

void LossScaleState::UpdateDeepSpeed(bool found_inf) {
  const LossScaleOptions& o = options_;
  if (found_inf) {
    growth_tracker_ = 0;
    if (o.hysteresis == 1 || hysteresis_left_ == 1) {
      if (scale_ == o.min_scale && o.fail_on_overflow_at_min_scale) {
        Fail("overflow at min_scale " + PyFloatRepr(o.min_scale) +
             " (fail_on_overflow_at_min_scale)");
      } else {
        BackOff();
      }
    } else {
      --hysteresis_left_;
      last_event_ = LossScaleEvent::kHysteresis;
    }
    return;
  }
  ++growth_tracker_;
  if (o.consecutive_hysteresis) hysteresis_left_ = o.hysteresis;
  int64_t stable = iter_ - last_overflow_iter_ - 1;
  if (stable > 0 && stable % o.growth_interval == 0) {
    if (!o.consecutive_hysteresis) hysteresis_left_ = o.hysteresis;
    growth_tracker_ = 0;
    Grow();
  }
}

void LossScaleState::UpdateMegatron(bool found_inf) {
  const LossScaleOptions& o = options_;
  if (found_inf) {
    growth_tracker_ = 0;
    --hysteresis_left_;
    if (hysteresis_left_ <= 0) {
      BackOff();
    } else {
      last_event_ = LossScaleEvent::kHysteresis;
    }
    return;
  }
  if (o.consecutive_hysteresis) hysteresis_left_ = o.hysteresis;
  if (++growth_tracker_ == o.growth_interval) {
    growth_tracker_ = 0;
    hysteresis_left_ = o.hysteresis;
    Grow();
  }
}

void LossScaleState::UpdateMindSpore(bool found_inf) {
  if (found_inf) {
    growth_tracker_ = 0;
    BackOff();
    return;
  }
  ++growth_tracker_;
  // MindSpore's cur_iter - last_overflow_iter, both offset by one.
  if ((iter_ - last_overflow_iter_) % options_.growth_interval == 0) {
    growth_tracker_ = 0;
    Grow();
  }
}

void LossScaleState::BackOff() {
  double next = scale_ * options_.backoff_factor;
  if (next < options_.min_scale) {
    scale_ = options_.min_scale;
    last_event_ = LossScaleEvent::kHeldAtMin;
    ++held_at_min_;
    return;
  }
  scale_ = next;
  last_event_ = LossScaleEvent::kBackedOff;
}

void LossScaleState::Grow() {
  double next = scale_ * options_.growth_factor;
  if (!std::isfinite(next) || next > options_.max_scale) {
    last_event_ = LossScaleEvent::kHeldAtMax;
    ++held_at_max_;
    return;
  }
  scale_ = next;
  last_event_ = LossScaleEvent::kGrew;
}

void LossScaleState::Fail(std::string_view problem) {
  last_event_ = LossScaleEvent::kFailed;
  if (!status_.ok()) return;  // keep the first failure
  status_ = Status::InvalidArgument(
      "loss scale " + PyFloatRepr(scale_) + " at step " +
          std::to_string(iter_ + 1),
      std::string(problem) + ". Note: training is diverging");
}

}  // namespace lockstep
