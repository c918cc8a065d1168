// LossScaleState::SaveState / LoadState: a small line-based text format.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "lockstep/numerics/loss_scale.h"

namespace lockstep {
namespace {

constexpr std::string_view kMagic = "lockstep-loss-scale";
constexpr int kVersion = 1;

std::string Hex(double d) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", d);
  return buf;
}

using Fields = std::map<std::string, std::string, std::less<>>;

// Splits "key value" lines after the header into `out`.
Status ParseLines(std::string_view text, Fields* out) {
  size_t line_no = 1, pos = text.find('\n');
  while (pos != std::string_view::npos && pos + 1 < text.size()) {
    size_t end = text.find('\n', pos + 1);
    std::string_view line = text.substr(pos + 1, end == std::string_view::npos
                                                     ? std::string_view::npos
                                                     : end - pos - 1);
    ++line_no;
    pos = end;
    if (line.empty()) continue;
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || sp == 0 || sp + 1 == line.size()) {
      return Status::Corruption(
          "loss-scale state",
          "line " + std::to_string(line_no) + ": expected 'key value'");
    }
    std::string key(line.substr(0, sp));
    if (!out->emplace(key, std::string(line.substr(sp + 1))).second) {
      return Status::Corruption("loss-scale state",
                                "key '" + key + "' appears twice");
    }
  }
  return Status::Ok();
}

class Reader {
 public:
  explicit Reader(const Fields& f) : f_(f) {}
  Status status() const { return status_; }

  double Double(const char* key) {
    const std::string* v = Get(key);
    if (v == nullptr) return 0;
    char* end = nullptr;
    double d = std::strtod(v->c_str(), &end);
    if (end == v->c_str() || *end != '\0') Bad(key, *v);
    return d;
  }
  int64_t Int(const char* key) {
    const std::string* v = Get(key);
    if (v == nullptr) return 0;
    char* end = nullptr;
    long long i = std::strtoll(v->c_str(), &end, 10);
    if (end == v->c_str() || *end != '\0') Bad(key, *v);
    return i;
  }
  bool Bool(const char* key) {
    const std::string* v = Get(key);
    if (v != nullptr && *v != "0" && *v != "1") Bad(key, *v);
    return v != nullptr && *v == "1";
  }
  std::string Str(const char* key) {
    const std::string* v = Get(key);
    return v ? *v : std::string();
  }

 private:
  const std::string* Get(const char* key) {
    auto it = f_.find(key);
    if (it != f_.end()) return &it->second;
    if (status_.ok())
      status_ = Status::Corruption("loss-scale state",
                                   std::string("missing '") + key + "'");
    return nullptr;
  }
  void Bad(const char* key, const std::string& v) {
    if (status_.ok()) {
      status_ =
          Status::Corruption("loss-scale state", std::string(key) + " '" + v +
                                                     "' is not a valid value");
    }
  }
  const Fields& f_;
  Status status_;
};

StatusOr<LossScaleRule> RuleFromName(const std::string& name) {
  for (LossScaleRule r :
       {LossScaleRule::kPyTorch, LossScaleRule::kDeepSpeed,
        LossScaleRule::kMegatron, LossScaleRule::kMindSpore}) {
    if (LossScaleRuleName(r) == name) return r;
  }
  return Status::Corruption("loss-scale state", "unknown rule '" + name + "'");
}

Status CheckHeader(std::string_view text) {
  std::string_view first = text.substr(0, text.find('\n'));
  if (first.substr(0, kMagic.size()) != kMagic ||
      first.size() <= kMagic.size() + 1) {
    return Status::Corruption("loss-scale state",
                              "not a lockstep loss-scale state");
  }
  std::string v(first.substr(kMagic.size() + 1));
  if (v != std::to_string(kVersion)) {
    return Status::NotSupported(
        "loss-scale state",
        "version " + v + "; this build reads " + std::to_string(kVersion));
  }
  return Status::Ok();
}

StatusOr<LossScaleOptions> ReadOptions(Reader* r) {
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
    return Status::Corruption("loss-scale state", valid.message());
  return o;
}

}  // namespace

std::string LossScaleState::SaveState() const {
  const LossScaleOptions& o = options_;
  std::string out = std::string(kMagic) + " " + std::to_string(kVersion) + "\n";
  auto put = [&](const char* k, const std::string& v) {
    out += std::string(k) + " " + v + "\n";
  };
  put("rule", std::string(LossScaleRuleName(o.rule)));
  put("init_scale", Hex(o.init_scale));
  put("growth_factor", Hex(o.growth_factor));
  put("backoff_factor", Hex(o.backoff_factor));
  put("growth_interval", std::to_string(o.growth_interval));
  put("hysteresis", std::to_string(o.hysteresis));
  put("consecutive_hysteresis", o.consecutive_hysteresis ? "1" : "0");
  put("min_scale", Hex(o.min_scale));
  put("max_scale", Hex(o.max_scale));
  put("fail_after_consecutive_overflows",
      std::to_string(o.fail_after_consecutive_overflows));
  put("fail_on_overflow_at_min_scale",
      o.fail_on_overflow_at_min_scale ? "1" : "0");
  put("dynamic", o.dynamic ? "1" : "0");
  put("drop_overflow_update", o.drop_overflow_update ? "1" : "0");
  put("scale", Hex(scale_));
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
  LOCKSTEP_RETURN_IF_ERROR(CheckHeader(text));
  Fields fields;
  LOCKSTEP_RETURN_IF_ERROR(ParseLines(text, &fields));
  Reader r(fields);
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
        "loss-scale state",
        "scale " + Hex(s.scale_) + " outside [min_scale, max_scale]");
  }
  if (s.growth_tracker_ < 0 || s.consecutive_overflows_ < 0 ||
      s.total_skipped_ < 0 || s.iter_ < 0 || s.held_at_min_ < 0 ||
      s.held_at_max_ < 0) {
    return Status::Corruption("loss-scale state", "a counter is negative");
  }
  return s;
}

}  // namespace lockstep
