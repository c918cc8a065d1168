// LossScaleState::SaveState / LoadState in the versioned key-value text of
// numerics/kv_text.h.
#include <cmath>
#include <string>

#include "lockstep/numerics/loss_scale.h"
#include "numerics/kv_text.h"

namespace lockstep {
namespace {

constexpr std::string_view kLossScaleMagic = "lockstep-loss-scale";
constexpr int kLossScaleVersion = 1;

using internal::HexDouble;
using internal::KeyValueReader;
using internal::KeyValues;

constexpr std::string_view kLossScaleSubject = "loss-scale state";

StatusOr<LossScaleRule> RuleFromName(const std::string& name) {
  for (LossScaleRule r :
       {LossScaleRule::kPyTorch, LossScaleRule::kDeepSpeed,
        LossScaleRule::kMegatron, LossScaleRule::kMindSpore}) {
    if (LossScaleRuleName(r) == name) return r;
  }
  return Status::Corruption(kLossScaleSubject, "unknown rule '" + name + "'");
}

StatusOr<LossScaleOptions> ReadOptions(KeyValueReader* r) {
  LossScaleOptions o;
  LOCKSTEP_ASSIGN_OR_RETURN(o.rule, RuleFromName(r->Str("rule")));
  o.init_scale = r->Double("init_scale");
  o.growth_factor = r->Double("growth_factor");
  o.backoff_factor = r->Double("backoff_factor");
  o.growth_interval = r->Int("growth_interval");
  o.hysteresis = r->Int("hysteresis");
  o.consecutive_hysteresis = r->Bool("consecutive_hysteresis");
  o.min_scale = r->Double("min_scale");
  o.max_scale = r->Double("max_scale");
  o.fail_after_consecutive_overflows =
      r->Int("fail_after_consecutive_overflows");
  o.fail_on_overflow_at_min_scale = r->Bool("fail_on_overflow_at_min_scale");
  o.dynamic = r->Bool("dynamic");
  o.drop_overflow_update = r->Bool("drop_overflow_update");
  LOCKSTEP_RETURN_IF_ERROR(r->status());
  Status valid = LossScaleState::Validate(o);
  if (!valid.ok())
    return Status::Corruption(kLossScaleSubject, valid.message());
  return o;
}

}  // namespace

std::string LossScaleState::SaveState() const {
  const LossScaleOptions& o = options_;
  std::string out = std::string(kLossScaleMagic) + " " +
                    std::to_string(kLossScaleVersion) + "\n";
  auto put = [&](const char* k, const std::string& v) {
    internal::PutKeyValue(&out, k, v);
  };
  put("rule", std::string(LossScaleRuleName(o.rule)));
  put("init_scale", HexDouble(o.init_scale));
  put("growth_factor", HexDouble(o.growth_factor));
  put("backoff_factor", HexDouble(o.backoff_factor));
  put("growth_interval", std::to_string(o.growth_interval));
  put("hysteresis", std::to_string(o.hysteresis));
  put("consecutive_hysteresis", o.consecutive_hysteresis ? "1" : "0");
  put("min_scale", HexDouble(o.min_scale));
  put("max_scale", HexDouble(o.max_scale));
  put("fail_after_consecutive_overflows",
      std::to_string(o.fail_after_consecutive_overflows));
  put("fail_on_overflow_at_min_scale",
      o.fail_on_overflow_at_min_scale ? "1" : "0");
  put("dynamic", o.dynamic ? "1" : "0");
  put("drop_overflow_update", o.drop_overflow_update ? "1" : "0");
  put("scale", HexDouble(scale_));
  put("growth_tracker", std::to_string(growth_tracker_));
  put("hysteresis_left", std::to_string(hysteresis_left_));
  put("consecutive_overflows", std::to_string(consecutive_overflows_));
  put("total_skipped", std::to_string(total_skipped_));
  put("iter", std::to_string(iter_));
  put("last_overflow_iter", std::to_string(last_overflow_iter_));
  put("held_at_min", std::to_string(held_at_min_));
  put("held_at_max", std::to_string(held_at_max_));
  return out;
}

StatusOr<LossScaleState> LossScaleState::LoadState(std::string_view text) {
  KeyValues fields;
  LOCKSTEP_RETURN_IF_ERROR(internal::ParseKeyValueText(
      text, kLossScaleMagic, kLossScaleVersion, kLossScaleSubject, &fields));
  KeyValueReader r(fields, kLossScaleSubject);
  LOCKSTEP_ASSIGN_OR_RETURN(LossScaleOptions o, ReadOptions(&r));
  LossScaleState s(o);
  s.scale_ = r.Double("scale");
  s.growth_tracker_ = r.Int("growth_tracker");
  s.hysteresis_left_ = r.Int("hysteresis_left");
  s.consecutive_overflows_ = r.Int("consecutive_overflows");
  s.total_skipped_ = r.Int("total_skipped");
  s.iter_ = r.Int("iter");
  s.last_overflow_iter_ = r.Int("last_overflow_iter");
  s.held_at_min_ = r.Int("held_at_min");
  s.held_at_max_ = r.Int("held_at_max");
  LOCKSTEP_RETURN_IF_ERROR(r.status());
  if (!std::isfinite(s.scale_) || s.scale_ < o.min_scale ||
      s.scale_ > o.max_scale) {
    return Status::Corruption(
        kLossScaleSubject,
        "scale " + HexDouble(s.scale_) + " outside [min_scale, max_scale]");
  }
  if (s.growth_tracker_ < 0 || s.consecutive_overflows_ < 0 ||
      s.total_skipped_ < 0 || s.iter_ < 0 || s.held_at_min_ < 0 ||
      s.held_at_max_ < 0) {
    return Status::Corruption(kLossScaleSubject, "a counter is negative");
  }
  return s;
}

}  // namespace lockstep
