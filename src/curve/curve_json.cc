#include "lockstep/curve/curve_json.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cmath>
#include <vector>

#include "lockstep/core/file.h"

namespace lockstep {
namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void Number(Writer& w, const char* key, double x) {
  w.Key(key);
  if (std::isfinite(x)) {
    w.Double(x);
  } else {
    w.Null();
  }
}

void Int(Writer& w, const char* key, int64_t x) {
  w.Key(key);
  w.Int64(x);
}

void OptStep(Writer& w, const char* key, const std::optional<int64_t>& s) {
  w.Key(key);
  if (s) {
    w.Int64(*s);
  } else {
    w.Null();
  }
}

void Steps(Writer& w, const char* key, const std::vector<int64_t>& steps) {
  w.Key(key);
  w.StartArray();
  for (int64_t s : steps) w.Int64(s);
  w.EndArray();
}

void Drops(Writer& w, const std::vector<LossScaleDrop>& drops) {
  w.Key("loss_scale_drops");
  w.StartArray();
  for (const auto& d : drops) {
    w.StartObject();
    Int(w, "step", d.step);
    Number(w, "from", d.from);
    Number(w, "to", d.to);
    w.EndObject();
  }
  w.EndArray();
}

void Input(Writer& w, const CurveInputResult& r, bool reference) {
  w.StartObject();
  w.Key("source");
  w.String(r.source.c_str(), static_cast<rapidjson::SizeType>(r.source.size()));
  w.Key("format");
  w.String(CurveFormatName(r.format));
  Int(w, "points", r.points);
  Int(w, "duplicate_steps", r.duplicate_steps);
  w.Key("reference");
  w.Bool(reference);
  Int(w, "common_steps", r.common_steps);
  Number(w, "max_abs_diff", r.max_abs_diff);
  OptStep(w, "max_abs_diff_step",
          r.max_abs_diff_step >= 0 ? std::optional(r.max_abs_diff_step)
                                   : std::nullopt);
  Number(w, "mean_abs_diff", r.mean_abs_diff);
  Number(w, "max_rel_diff", r.max_rel_diff);
  Number(w, "mean_rel_diff", r.mean_rel_diff);
  OptStep(w, "first_divergent_step", r.first_divergent_step);
  Int(w, "divergent_steps", r.divergent_steps);
  Int(w, "nonfinite_mismatches", r.nonfinite_mismatches);
  Steps(w, "only_steps", r.only_steps);
  Steps(w, "missing_steps", r.missing_steps);
  Steps(w, "nonfinite_steps", r.nonfinite_steps);
  Drops(w, r.loss_scale_drops);
  Steps(w, "skipped_steps", r.skipped_steps);
  Int(w, "skipped_total", r.skipped_total);
  w.EndObject();
}

void Overall(Writer& w, const CurveComparison& c) {
  w.Key("metric");
  w.String(c.options.metric.c_str());
  Number(w, "tol_abs", c.options.tol_abs);
  Number(w, "tol_rel", c.options.tol_rel);
  Number(w, "smoothing", c.options.smoothing);
  std::string verdict = CurveVerdict(c);
  w.Key("verdict");
  w.String(verdict.c_str(), static_cast<rapidjson::SizeType>(verdict.size()));
  w.Key("passed");
  w.Bool(c.passed());
  w.Key("diverged");
  w.Bool(c.diverged());
  w.Key("early_stop");
  w.String(c.early_stop.c_str(),
           static_cast<rapidjson::SizeType>(c.early_stop.size()));
  Int(w, "common_steps", c.common_steps);
  Number(w, "max_abs_diff", c.max_abs_diff);
  Number(w, "mean_abs_diff", c.mean_abs_diff);
  Number(w, "max_rel_diff", c.max_rel_diff);
  Number(w, "mean_rel_diff", c.mean_rel_diff);
  OptStep(w, "first_divergent_step", c.first_divergent_step);
  Int(w, "divergent_steps", c.divergent_steps);
  Int(w, "nonfinite_mismatches", c.nonfinite_mismatches);
  w.Key("first_divergent_source");
  if (c.first_divergent_input >= 0) {
    w.String(c.inputs[c.first_divergent_input].source.c_str());
  } else {
    w.Null();
  }
}

}  // namespace

std::string CurveComparisonToJson(const CurveComparison& c) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.SetIndent(' ', 1);
  w.StartObject();
  Overall(w, c);
  w.Key("inputs");
  w.StartArray();
  for (size_t i = 0; i < c.inputs.size(); ++i) Input(w, c.inputs[i], i == 0);
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

Status WriteCurveJson(const std::string& path, const CurveComparison& c) {
  return WriteFileAtomic(path, CurveComparisonToJson(c));
}

}  // namespace lockstep
