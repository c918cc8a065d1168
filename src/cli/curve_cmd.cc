// lockstep curve A B [C...]: a thin shell over lockstep::ReadCurveLog,
// CompareCurves and the curve plot/JSON writers.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/core/file.h"
#include "lockstep/core/log.h"
#include "lockstep/curve/curve_compare.h"
#include "lockstep/curve/curve_json.h"
#include "lockstep/curve/curve_plot.h"
#include "lockstep/curve/readers.h"

namespace lockstep::cli {
namespace curve_cmd {  // named: the CLI builds as a unity build
namespace {

struct Args {
  std::vector<std::string> logs;
  CurveCompareOptions opts;
  std::string format = "auto", out_dir, json;
  LoggingOptions logging;
};

constexpr CurveFormat kFormats[] = {
    CurveFormat::kAuto, CurveFormat::kTrainerState, CurveFormat::kMegatron,
    CurveFormat::kCsv,  CurveFormat::kJsonl,        CurveFormat::kTensorBoard};

StatusOr<CurveFormat> ParseFormat(const std::string& name) {
  std::string names;
  for (CurveFormat f : kFormats) {
    if (name == CurveFormatName(f)) return f;
    names += (names.empty() ? "" : "|") + std::string(CurveFormatName(f));
  }
  return Status::InvalidArgument("--format " + name,
                                 "unknown format. Note: use " + names);
}

void PrintInput(const CurveLog& log, const std::string& metric) {
  auto it = log.metrics.find(metric);
  size_t points = it == log.metrics.end() ? 0 : it->second.points.size();
  LogInfo(log.source + ": " + CurveFormatName(log.format) + ", " +
          std::to_string(points) + " " + metric + " points, " +
          std::to_string(log.lines) + " lines, " +
          std::to_string(log.malformed) + " malformed, " +
          std::to_string(log.warnings.size()) + " warnings");
  for (const auto& w : log.warnings) LogWarning(log.source + ": " + w);
}

std::string Num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

std::string Head(const std::vector<int64_t>& steps) {
  std::string s;
  for (size_t i = 0; i < steps.size() && i < 5; ++i) {
    s += (i ? ", " : "") + std::to_string(steps[i]);
  }
  return steps.size() > 5 ? s + ", ..." : s;
}

// Per input: alignment gaps and health, warnings where something is off.
void PrintResult(const CurveInputResult& r, bool reference) {
  if (!reference) {
    LogInfo(r.source + ": " + std::to_string(r.common_steps) +
            " common steps, max abs diff " + Num(r.max_abs_diff) + ", " +
            std::to_string(r.divergent_steps) + " divergent steps" +
            (r.first_divergent_step
                 ? ", first divergent step " +
                       std::to_string(*r.first_divergent_step)
                 : ""));
    if (!r.only_steps.empty() || !r.missing_steps.empty()) {
      LogWarning(r.source + ": " + std::to_string(r.only_steps.size()) +
                 " steps not in the reference (" + Head(r.only_steps) + "), " +
                 std::to_string(r.missing_steps.size()) +
                 " reference steps missing (" + Head(r.missing_steps) + ")");
    }
  }
  if (r.duplicate_steps > 0) {
    LogWarning(r.source + ": " + std::to_string(r.duplicate_steps) +
               " repeated steps (the later value kept)");
  }
  if (!r.nonfinite_steps.empty()) {
    LogWarning(r.source + ": nan/inf at " +
               std::to_string(r.nonfinite_steps.size()) + " steps (" +
               Head(r.nonfinite_steps) + ")");
  }
  if (!r.loss_scale_drops.empty() || r.skipped_total > 0) {
    LogInfo(r.source + ": " + std::to_string(r.loss_scale_drops.size()) +
            " loss-scale drops, " + std::to_string(r.skipped_total) +
            " skipped iterations");
  }
}

void AddOptions(CLI::App& app, Args* a) {
  app.add_option("LOGS", a->logs,
                 "Training logs; the first is the reference (2 or more)")
      ->required();
  app.add_option("--metric", a->opts.metric,
                 "Metric to compare (loss, eval_loss, learning_rate, "
                 "grad_norm, loss_scale, ...; a log's own column name too)")
      ->capture_default_str()
      ->transform(CanonicalMetric());
  app.add_option("--tol-abs", a->opts.tol_abs,
                 "Absolute tolerance (0: only equal values pass)")
      ->capture_default_str()
      ->group("Tolerances");
  app.add_option("--tol-rel", a->opts.tol_rel,
                 "Relative tolerance, of |reference| (0: off). A step "
                 "diverges when |diff| exceeds both")
      ->capture_default_str()
      ->group("Tolerances");
  app.add_option("--smooth", a->opts.smoothing,
                 "TensorBoard EMA weight in [0, 1) (0: off); compares the "
                 "smoothed curves")
      ->capture_default_str();
  app.add_flag("--log-y", a->opts.log_y, "Log-scale y axis in the plot");
  app.add_option("--until", a->opts.until,
                 "Compare steps up to N only (without it, a curve that stops "
                 "before another fails)");
  app.add_option("--format", a->format,
                 "auto|trainer_state|megatron|csv|jsonl|tensorboard")
      ->capture_default_str();
  app.add_option("-o,--output", a->out_dir,
                 "Write DIR/curve.svg and DIR/curve.html (created)")
      ->group("Report");
  app.add_option("--json", a->json, "Write the comparison as JSON")
      ->group("Report");
  AddLoggingOptions(app, &a->logging);
}

// Validates everything that needs no file, before reading.
Status Validate(const Args& a, CurveFormat* format) {
  if (a.logs.size() < 2) {
    return Status::InvalidArgument(
        "curve", "needs 2 or more logs, got " + std::to_string(a.logs.size()) +
                     ". Note: the first log is the reference");
  }
  LOCKSTEP_RETURN_IF_ERROR(ValidateCurveOptions(a.opts));
  LOCKSTEP_ASSIGN_OR_RETURN(*format, ParseFormat(a.format));
  if (!a.json.empty()) {
    // `-o DIR --json DIR/curve.json` (docs/curve.md): DIR is made for the
    // plots anyway, so it is made first, and the JSON's place checked then.
    if (!a.out_dir.empty()) LOCKSTEP_RETURN_IF_ERROR(CreateDirs(a.out_dir));
    LOCKSTEP_RETURN_IF_ERROR(CheckOutputFile(a.json));
  }
  return Status::Ok();
}

Status WriteOutputs(const Args& a, const CurveComparison& c) {
  if (!a.out_dir.empty()) {
    LOCKSTEP_RETURN_IF_ERROR(WriteCurvePlots(a.out_dir, c));
    LogInfo("wrote " + a.out_dir + "/curve.svg and " + a.out_dir +
            "/curve.html");
  }
  if (!a.json.empty()) {
    LOCKSTEP_RETURN_IF_ERROR(WriteCurveJson(a.json, c));
    LogInfo("wrote " + a.json);
  }
  return Status::Ok();
}

int Run(int argc, char** argv) {
  Args a;
  CLI::App app{
      "Compare training loss curves (HuggingFace trainer_state.json, "
      "Megatron/DeepSpeed logs, CSV/TSV, JSONL, TensorBoard events) step by "
      "step against the first.\nExit: 0 curves agree, 1 divergence beyond "
      "tolerance, 2 usage error, 3 unreadable log.",
      "curve"};
  app.footer(
      "Example:\n  lockstep curve gpu/trainer_state.json "
      "npu/trainer_state.json -o curve_out");
  AddOptions(app, &a);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(a.logging);
  CurveFormat format = CurveFormat::kAuto;
  if (Status s = Validate(a, &format); !s.ok()) return ReportError(s);
  std::vector<CurveLog> logs;
  for (const auto& path : a.logs) {
    StatusOr<CurveLog> log = ReadCurveLog(path, format);
    if (!log.ok()) return ReportError(log.status());
    PrintInput(*log, a.opts.metric);
    logs.push_back(std::move(log).value());
  }
  StatusOr<CurveComparison> c = CompareCurves(logs, a.opts);
  if (!c.ok()) return ReportError(c.status());
  for (size_t k = 0; k < c->inputs.size(); ++k) {
    PrintResult(c->inputs[k], k == 0);
  }
  if (Status s = WriteOutputs(a, *c); !s.ok()) return ReportError(s);
  std::printf("%s\n", EscapeControl(CurveVerdict(*c)).c_str());
  return c->passed() ? kExitPass : kExitDiverged;
}

}  // namespace
}  // namespace curve_cmd

int RunCurve(int argc, char** argv) { return curve_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
