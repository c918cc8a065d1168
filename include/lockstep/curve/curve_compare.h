// Comparing training curves: N >= 2 logs on one metric, the first being the
// reference the others are compared against. Aligns by step, measures the
// differences, finds the first divergent step, and lists what else a log
// says about the run's health (nan/inf values, loss-scale drops, skipped
// iterations).
//
// Rules, stated once:
//   - Alignment: a series is sorted by step; a step logged twice keeps the
//     later value. Two inputs are compared over the steps both hold.
//   - Smoothing (weight w in [0, 1), 0 = off) is TensorBoard's debiased EMA
//     (see SmoothEma), each input's EMA running over all of its own steps.
//     When on, differences and divergence are computed on the smoothed
//     values; the nan/inf step lists always look at raw values.
//   - Differences: diff = target - reference; rel = |diff| / |reference|,
//     +inf when the reference is 0 and diff is not, 0 when both are 0.
//   - Divergence at a common step: diff is finite and
//         |diff| > tol_abs  AND  |diff| > tol_rel * |reference|,
//     i.e. the step fails every tolerance; a tolerance of 0 admits only
//     exact equality, so with both at 0 (the default) any difference
//     diverges. A step where either value is nan/inf diverges unless both
//     are the same non-finite value (nan and nan, +inf and +inf). A
//     comparison passes when no step diverges and every input shares at
//     least one step with the reference.
//   - Health, per input and from raw series: "loss_scale" drops are steps
//     where it is lower than at the previous logged step; skipped steps are
//     those whose "skipped_iterations" value is > 0, read as Megatron logs
//     it: the number skipped in the logging interval ending at that step
//     (so skipped_total is their sum, not the last value).
//   - Maxima and means are taken over the steps whose diff (resp. rel) is
//     finite; max_abs_diff is thus the smallest tol_abs that passes when no
//     step is non-finite.
// Thread safety: pure functions over values.
#ifndef LOCKSTEP_CURVE_CURVE_COMPARE_H_
#define LOCKSTEP_CURVE_CURVE_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/curve/curve_log.h"

namespace lockstep {

struct CurveCompareOptions {
  std::string metric = kMetricLoss;  // a canonical metric name
  double tol_abs = 0;                // >= 0; 0 admits only equal values
  double tol_rel = 0;    // >= 0, relative to |reference|; 0 likewise
  double smoothing = 0;  // EMA weight in [0, 1); 0 = off
  bool log_y = false;    // plot the metric on a log axis (plots only)
  // Compare steps <= until only. Unset, a curve that stops before another
  // (a crashed or shorter run) fails the comparison.
  std::optional<int64_t> until;
};

// A step where the "loss_scale" series went down (dynamic loss scaling
// backed off, normally after an overflow).
struct LossScaleDrop {
  int64_t step = 0;
  double from = 0;
  double to = 0;
};

// What one input holds and how it differs from the reference. For the
// reference itself the difference fields are empty/zero.
struct CurveInputResult {
  std::string source;
  CurveFormat format = CurveFormat::kAuto;
  int64_t points = 0;                // points of the metric as logged
  int64_t duplicate_steps = 0;       // points dropped because a step repeated
  std::vector<CurvePoint> curve;     // aligned raw values (sorted, unique)
  std::vector<CurvePoint> smoothed;  // EMA of curve; empty when off
  std::vector<int64_t> nonfinite_steps;  // raw nan/inf values
  std::vector<LossScaleDrop> loss_scale_drops;
  std::vector<int64_t> skipped_steps;  // "skipped_iterations" > 0
  int64_t skipped_total = 0;           // sum of those counts
  // Versus the reference:
  std::vector<int64_t> only_steps;     // here, not in the reference
  std::vector<int64_t> missing_steps;  // in the reference, not here
  std::vector<CurvePoint> diff;        // target - reference, common steps
  int64_t common_steps = 0;
  double max_abs_diff = 0;
  int64_t max_abs_diff_step = -1;  // -1 when no finite diff
  double mean_abs_diff = 0;
  double max_rel_diff = 0;  // may be +inf (reference 0)
  double mean_rel_diff = 0;
  std::optional<int64_t> first_divergent_step;
  int64_t divergent_steps = 0;       // common steps that diverge
  int64_t nonfinite_mismatches = 0;  // of those, nan/inf on one side
};

struct CurveComparison {
  CurveCompareOptions options;
  std::vector<CurveInputResult> inputs;  // [0] is the reference
  int64_t common_steps = 0;              // steps held by every input
  // Over all non-reference inputs:
  double max_abs_diff = 0;
  double mean_abs_diff = 0;  // over all compared steps of all inputs
  double max_rel_diff = 0;
  double mean_rel_diff = 0;
  std::optional<int64_t> first_divergent_step;  // earliest over inputs
  int first_divergent_input = -1;    // index into inputs; -1 when none
  int64_t divergent_steps = 0;       // summed over inputs
  int64_t nonfinite_mismatches = 0;  // summed over inputs

  // The longest curve's last step, and which input it is (-1 when no curve
  // has a point).
  int64_t last_step = 0;
  int longest_input = -1;
  // "a.log stops at step 120, b.log goes on to step 200" when, without
  // options.until, some curve ends before another; "" otherwise.
  std::string early_stop;

  bool diverged() const { return first_divergent_step.has_value(); }
  // The index of the first non-reference input that shares no step with
  // the reference (nothing could be compared), or -1.
  int disjoint_input() const;
  // No divergence, every input shares steps with the reference, and no
  // curve stops before another.
  bool passed() const {
    return !diverged() && disjoint_input() < 0 && early_stop.empty();
  }
};

// Checks the options: tolerances finite and >= 0, smoothing in [0, 1),
// metric not empty. Errors are InvalidArgument naming the option and value.
Status ValidateCurveOptions(const CurveCompareOptions& options);

// The series sorted by step, a repeated step keeping its later value.
// `duplicates` (optional) receives the number of points dropped.
std::vector<CurvePoint> AlignSeries(const std::vector<CurvePoint>& points,
                                    int64_t* duplicates = nullptr);

// TensorBoard's smoothing: last = last * w + (1 - w) * x starting from 0,
// reported as last / (1 - w^n) with n the number of finite points so far.
// A nan/inf point does not update `last` and is reported as itself.
// REQUIRES: 0 <= weight < 1 (weight 0 returns the input).
std::vector<CurvePoint> SmoothEma(const std::vector<CurvePoint>& points,
                                  double weight);

// Compares logs[1..] against logs[0] on options.metric.
// Errors: InvalidArgument for bad options, fewer than 2 logs, or a metric
// no log holds; NotFound (naming the file and what it has) when some log
// lacks it.
StatusOr<CurveComparison> CompareCurves(const std::vector<CurveLog>& logs,
                                        const CurveCompareOptions& options);

// One grep-able line, "PASS: " when c.passed(), else "FAIL: ":
//   PASS: loss curves agree over 187 common steps (max abs diff 0.0012, max
//   rel diff 0.0004)
//   FAIL: loss diverges at step 400 in b.log: |diff| 0.31 > tol_abs 0.1 (12
//   divergent steps, max abs diff 0.52 over 187 common steps). Note:
//   --tol-abs 0.52 would pass
//   FAIL: loss of b.log shares no step with the reference a.log
// The note (the smallest passing tol_abs, rounded up) appears only when no
// step fails on nan/inf. Numbers printed with %.6g.
std::string CurveVerdict(const CurveComparison& c);

}  // namespace lockstep

#endif  // LOCKSTEP_CURVE_CURVE_COMPARE_H_
