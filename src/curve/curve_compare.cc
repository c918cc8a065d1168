#include "lockstep/curve/curve_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "curve/curve_text.h"

namespace lockstep {
namespace {

using curve_text::Num;

const std::vector<CurvePoint>* FindSeries(const CurveLog& log,
                                          const std::string& name) {
  auto it = log.metrics.find(name);
  return it == log.metrics.end() ? nullptr : &it->second.points;
}

std::string MetricNames(const CurveLog& log) {
  std::string s;
  for (const auto& [name, series] : log.metrics) {
    s += (s.empty() ? "" : ", ") + name;
  }
  return s.empty() ? "no metrics" : s;
}

// Errors when the metric is missing from every log or from some log.
Status CheckMetricPresent(const std::vector<CurveLog>& logs,
                          const std::string& metric) {
  std::set<std::string> seen;
  const CurveLog* lacking = nullptr;
  for (const auto& log : logs) {
    if (FindSeries(log, metric) == nullptr) {
      if (lacking == nullptr) lacking = &log;
    }
    for (const auto& [name, s] : log.metrics) seen.insert(name);
  }
  if (lacking == nullptr) return Status::Ok();
  if (lacking == &logs[0] && seen.empty()) {
    return Status::InvalidArgument("--metric '" + metric + "'",
                                   "no log holds any metric");
  }
  bool in_none = std::none_of(logs.begin(), logs.end(), [&](const auto& l) {
    return FindSeries(l, metric) != nullptr;
  });
  if (in_none) {
    std::string names;
    for (const auto& n : seen) names += (names.empty() ? "" : ", ") + n;
    return Status::InvalidArgument(
        "--metric '" + metric + "'",
        "no log holds it. Note: the logs hold " + names);
  }
  return Status::NotFound(
      lacking->source,
      "no '" + metric + "' series (it holds " + MetricNames(*lacking) + ")");
}

// Raw-value health of one log: nan/inf steps, loss-scale drops and
// Megatron's per-interval skipped-iteration counts.
void FillHealth(const CurveLog& log, CurveInputResult* r) {
  for (const auto& p : r->curve) {
    if (!std::isfinite(p.value)) r->nonfinite_steps.push_back(p.step);
  }
  if (const auto* ls = FindSeries(log, kMetricLossScale)) {
    std::vector<CurvePoint> s = AlignSeries(*ls);
    for (size_t i = 1; i < s.size(); ++i) {
      if (s[i].value < s[i - 1].value) {
        r->loss_scale_drops.push_back({s[i].step, s[i - 1].value, s[i].value});
      }
    }
  }
  if (const auto* sk = FindSeries(log, kMetricSkipped)) {
    for (const auto& p : AlignSeries(*sk)) {
      if (p.value > 0 && std::isfinite(p.value)) {
        r->skipped_steps.push_back(p.step);
        r->skipped_total += static_cast<int64_t>(p.value);
      }
    }
  }
}

bool SameNonFinite(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (std::isinf(a) && a == b);
}

bool Diverges(double ref, double t, const CurveCompareOptions& o) {
  if (!std::isfinite(ref) || !std::isfinite(t)) return !SameNonFinite(ref, t);
  double d = std::fabs(t - ref);
  return d > o.tol_abs && d > o.tol_rel * std::fabs(ref);
}

// Why a step with difference `d` diverges, naming the tolerances set.
std::string DivergenceReason(double d, const CurveCompareOptions& o) {
  if (!std::isfinite(d)) return "nan/inf on one side";
  std::string why = "|diff| " + Num(std::fabs(d));
  if (o.tol_abs == 0 && o.tol_rel == 0) return why + " with no tolerance set";
  if (o.tol_abs > 0) why += " > tol_abs " + Num(o.tol_abs);
  if (o.tol_rel > 0) {
    why += std::string(o.tol_abs > 0 ? " and" : "") + " > tol_rel " +
           Num(o.tol_rel) + " x |ref|";
  }
  return why;
}

double RelDiff(double d, double ref) {
  if (ref == 0) return d == 0 ? 0 : INFINITY;
  return std::fabs(d) / std::fabs(ref);
}

struct Sums {
  double abs = 0, rel = 0;
  int64_t n_abs = 0, n_rel = 0;
};

// Walks the common steps of `ref` and `t` (both aligned) and fills the
// difference fields of `r`.
Sums DiffAgainst(const std::vector<CurvePoint>& ref,
                 const std::vector<CurvePoint>& t, const CurveCompareOptions& o,
                 CurveInputResult* r) {
  Sums s;
  size_t i = 0, j = 0;
  while (i < ref.size() || j < t.size()) {
    if (j == t.size() || (i < ref.size() && ref[i].step < t[j].step)) {
      r->missing_steps.push_back(ref[i++].step);
    } else if (i == ref.size() || t[j].step < ref[i].step) {
      r->only_steps.push_back(t[j++].step);
    } else {
      double d = t[j].value - ref[i].value;
      int64_t step = t[j].step;
      r->diff.push_back({step, d});
      if (std::isfinite(d)) {
        if (std::fabs(d) > r->max_abs_diff || r->max_abs_diff_step < 0) {
          r->max_abs_diff = std::fabs(d), r->max_abs_diff_step = step;
        }
        s.abs += std::fabs(d), ++s.n_abs;
        double rel = RelDiff(d, ref[i].value);
        r->max_rel_diff = std::max(r->max_rel_diff, rel);
        if (std::isfinite(rel)) s.rel += rel, ++s.n_rel;
      }
      if (Diverges(ref[i].value, t[j].value, o)) {
        if (!r->first_divergent_step) r->first_divergent_step = step;
        ++r->divergent_steps;
        if (!std::isfinite(d)) ++r->nonfinite_mismatches;
      }
      ++i, ++j;
    }
  }
  r->common_steps = static_cast<int64_t>(r->diff.size());
  r->mean_abs_diff = s.n_abs ? s.abs / s.n_abs : 0;
  r->mean_rel_diff = s.n_rel ? s.rel / s.n_rel : 0;
  return s;
}

int64_t CountCommonToAll(const std::vector<CurveInputResult>& in) {
  std::vector<int64_t> common;
  for (const auto& p : in[0].curve) common.push_back(p.step);
  for (size_t k = 1; k < in.size(); ++k) {
    std::vector<int64_t> steps, out;
    for (const auto& p : in[k].curve) steps.push_back(p.step);
    std::set_intersection(common.begin(), common.end(), steps.begin(),
                          steps.end(), std::back_inserter(out));
    common.swap(out);
  }
  return static_cast<int64_t>(common.size());
}

CurveInputResult Prepare(const CurveLog& log, const CurveCompareOptions& o) {
  CurveInputResult r;
  r.source = log.source;
  r.format = log.format;
  const auto& pts = *FindSeries(log, o.metric);
  r.points = static_cast<int64_t>(pts.size());
  r.curve = AlignSeries(pts, &r.duplicate_steps);
  if (o.until) {
    auto past = std::upper_bound(
        r.curve.begin(), r.curve.end(), *o.until,
        [](int64_t s, const CurvePoint& p) { return s < p.step; });
    r.curve.erase(past, r.curve.end());
  }
  if (o.smoothing > 0) r.smoothed = SmoothEma(r.curve, o.smoothing);
  FillHealth(log, &r);
  return r;
}

void Aggregate(CurveComparison* c, const std::vector<Sums>& sums) {
  Sums all;
  for (size_t k = 1; k < c->inputs.size(); ++k) {
    const CurveInputResult& r = c->inputs[k];
    c->max_abs_diff = std::max(c->max_abs_diff, r.max_abs_diff);
    c->max_rel_diff = std::max(c->max_rel_diff, r.max_rel_diff);
    all.abs += sums[k].abs, all.n_abs += sums[k].n_abs;
    all.rel += sums[k].rel, all.n_rel += sums[k].n_rel;
    c->divergent_steps += r.divergent_steps;
    c->nonfinite_mismatches += r.nonfinite_mismatches;
    if (r.first_divergent_step &&
        (!c->first_divergent_step ||
         *r.first_divergent_step < *c->first_divergent_step)) {
      c->first_divergent_step = r.first_divergent_step;
      c->first_divergent_input = static_cast<int>(k);
    }
  }
  c->mean_abs_diff = all.n_abs ? all.abs / all.n_abs : 0;
  c->mean_rel_diff = all.n_rel ? all.rel / all.n_rel : 0;
  c->common_steps = CountCommonToAll(c->inputs);
}

// The longest curve: its last step and input (the first of equals).
void FindLongest(CurveComparison* c) {
  for (size_t k = 0; k < c->inputs.size(); ++k) {
    const auto& r = c->inputs[k];
    if (!r.curve.empty() &&
        (c->longest_input < 0 || r.curve.back().step > c->last_step)) {
      c->last_step = r.curve.back().step;
      c->longest_input = static_cast<int>(k);
    }
  }
}

// The first input whose curve ends before the longest one's, said in words.
std::string EarlyStop(const CurveComparison& c) {
  if (c.options.until || c.longest_input < 0) return "";
  const CurveInputResult& longest =
      c.inputs[static_cast<size_t>(c.longest_input)];
  for (const auto& r : c.inputs) {
    if (!r.curve.empty() && r.curve.back().step < c.last_step) {
      return r.source + " stops at step " +
             std::to_string(r.curve.back().step) + ", " + longest.source +
             " goes on to step " + std::to_string(c.last_step);
    }
  }
  return "";
}

}  // namespace

Status ValidateCurveOptions(const CurveCompareOptions& o) {
  if (o.metric.empty()) {
    return Status::InvalidArgument("--metric", "is empty");
  }
  if (!(o.tol_abs >= 0) || std::isinf(o.tol_abs)) {
    return Status::InvalidArgument("--tol-abs " + Num(o.tol_abs),
                                   "must be a finite number >= 0");
  }
  if (!(o.tol_rel >= 0) || std::isinf(o.tol_rel)) {
    return Status::InvalidArgument("--tol-rel " + Num(o.tol_rel),
                                   "must be a finite number >= 0");
  }
  if (!(o.smoothing >= 0 && o.smoothing < 1)) {
    return Status::InvalidArgument(
        "--smooth " + Num(o.smoothing),
        "must be in [0, 1). Note: TensorBoard's default is 0.6");
  }
  return Status::Ok();
}

std::vector<CurvePoint> AlignSeries(const std::vector<CurvePoint>& points,
                                    int64_t* duplicates) {
  std::vector<CurvePoint> s = points;
  std::stable_sort(s.begin(), s.end(), [](const auto& a, const auto& b) {
    return a.step < b.step;
  });
  std::vector<CurvePoint> out;
  out.reserve(s.size());
  for (const auto& p : s) {
    if (!out.empty() && out.back().step == p.step) {
      out.back() = p;  // the later point wins (stable sort kept log order)
    } else {
      out.push_back(p);
    }
  }
  if (duplicates) *duplicates = static_cast<int64_t>(s.size() - out.size());
  return out;
}

std::vector<CurvePoint> SmoothEma(const std::vector<CurvePoint>& points,
                                  double weight) {
  std::vector<CurvePoint> out = points;
  if (weight == 0) return out;
  double last = 0;
  int n = 0;
  for (auto& p : out) {
    if (!std::isfinite(p.value)) continue;
    last = last * weight + (1 - weight) * p.value;
    ++n;
    p.value = last / (1 - std::pow(weight, n));
  }
  return out;
}

StatusOr<CurveComparison> CompareCurves(const std::vector<CurveLog>& logs,
                                        const CurveCompareOptions& options) {
  LOCKSTEP_RETURN_IF_ERROR(ValidateCurveOptions(options));
  if (logs.size() < 2) {
    return Status::InvalidArgument(
        "curve", "needs at least 2 logs, got " + std::to_string(logs.size()));
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckMetricPresent(logs, options.metric));
  CurveComparison c;
  c.options = options;
  for (const auto& log : logs) c.inputs.push_back(Prepare(log, options));
  bool smooth = options.smoothing > 0;
  const CurveInputResult& ref = c.inputs[0];
  std::vector<Sums> sums(c.inputs.size());
  for (size_t k = 1; k < c.inputs.size(); ++k) {
    CurveInputResult& r = c.inputs[k];
    sums[k] = DiffAgainst(smooth ? ref.smoothed : ref.curve,
                          smooth ? r.smoothed : r.curve, options, &r);
  }
  Aggregate(&c, sums);
  FindLongest(&c);
  c.early_stop = EarlyStop(c);
  return c;
}

int CurveComparison::disjoint_input() const {
  for (size_t k = 1; k < inputs.size(); ++k) {
    if (inputs[k].common_steps == 0) return static_cast<int>(k);
  }
  return -1;
}

std::string CurveVerdict(const CurveComparison& c) {
  const std::string& m = c.options.metric;
  if (int k = c.disjoint_input(); k >= 0 && !c.diverged()) {
    return "FAIL: " + m + " of " + c.inputs[k].source +
           " shares no step with the reference " + c.inputs[0].source;
  }
  std::string over =
      " over " + std::to_string(c.common_steps) + " common steps";
  if (!c.diverged() && !c.early_stop.empty()) {
    return "FAIL: " + c.early_stop + " (the " + m + " curves agree" + over +
           "). Note: --until N compares steps up to N only";
  }
  if (!c.diverged()) {
    return "PASS: " + m + " curves agree" + over + " (max abs diff " +
           Num(c.max_abs_diff) + ", max rel diff " + Num(c.max_rel_diff) + ")";
  }
  const CurveInputResult& r = c.inputs[c.first_divergent_input];
  int64_t step = *c.first_divergent_step;
  auto it = std::lower_bound(
      r.diff.begin(), r.diff.end(), step,
      [](const CurvePoint& p, int64_t s) { return p.step < s; });
  double d = it != r.diff.end() ? it->value : NAN;
  // The counts of the curve named (a run that stopped early shares fewer
  // steps with the reference, and is named after).
  std::string line =
      "FAIL: " + m + " diverges at step " + std::to_string(step) + " in " +
      r.source + ": " + DivergenceReason(d, c.options) + " (" +
      std::to_string(r.divergent_steps) + " divergent steps, max abs diff " +
      Num(r.max_abs_diff) + " over " + std::to_string(r.common_steps) +
      " common steps)";
  if (!c.early_stop.empty()) {
    line += "; and " + c.early_stop;
  } else if (c.nonfinite_mismatches == 0) {
    line += ". Note: --tol-abs " + curve_text::NumUp(c.max_abs_diff) +
            " would pass";
  }
  return line;
}

}  // namespace lockstep
