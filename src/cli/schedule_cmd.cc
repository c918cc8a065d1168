// lockstep schedule <name> [options]: prints a learning-rate schedule as
// "step,lr" CSV (or JSON) and optionally plots it; a thin shell over
// lockstep::LrSchedule (lockstep/numerics/lr_schedule.h).
//
// Output: one row per step 0, every, 2*every, ... below --steps (default:
// through the schedule's last step, end_step()); lr printed in the shortest
// form that round-trips the double. Options that do not apply to the chosen
// schedule are refused, so a typo'd configuration cannot pass silently.
#include <charconv>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/core/file.h"
#include "lockstep/curve/curve_plot.h"
#include "lockstep/numerics/lr_schedule.h"

namespace lockstep::cli {
namespace schedule_cmd {  // named: the CLI builds as a unity build
namespace {

using K = ScheduleKind;
constexpr int64_t kMaxRows = 1000000000;

struct Args {
  std::string name;
  ScheduleConfig c;
  std::string anneal = "cos", warmup_shape = "linear", decay_shape = "cosine";
  int64_t steps = -1;  // -1: through end_step()
  int64_t every = 1;
  std::string format = "csv", plot;
  LoggingOptions logging;
};

// Which schedule-specific options each schedule takes.
const std::map<std::string, std::vector<K>>& OptionKinds() {
  static const std::map<std::string, std::vector<K>> kMap = {
      {"--min-lr",
       {K::kCosineDecay, K::kCosineRestarts, K::kLinearWarmup, K::kCosineWarmup,
        K::kPolynomial, K::kExponential, K::kNaturalExp, K::kInverseTime,
        K::kWsd, K::kInverseSqrt, K::kConstantWarmup}},
      {"--warmup-steps",
       {K::kLinearWarmup, K::kCosineWarmup, K::kPolynomial, K::kWsd,
        K::kInverseSqrt, K::kConstantWarmup}},
      {"--decay-steps",
       {K::kCosineDecay, K::kExponential, K::kNaturalExp, K::kInverseTime,
        K::kWsd}},
      {"--total-steps",
       {K::kLinearWarmup, K::kCosineWarmup, K::kPolynomial, K::kOneCycle}},
      {"--stable-steps", {K::kWsd}},
      {"--period", {K::kCosineRestarts}},
      {"--period-mult", {K::kCosineRestarts}},
      {"--decay-rate", {K::kExponential, K::kNaturalExp, K::kInverseTime}},
      {"--staircase", {K::kExponential, K::kNaturalExp, K::kInverseTime}},
      {"--power", {K::kPolynomial}},
      {"--cycles", {K::kCosineWarmup}},
      {"--pct-start", {K::kOneCycle}},
      {"--div-factor", {K::kOneCycle}},
      {"--final-div-factor", {K::kOneCycle}},
      {"--three-phase", {K::kOneCycle}},
      {"--anneal", {K::kOneCycle}},
      {"--warmup-shape", {K::kWsd}},
      {"--decay-shape", {K::kWsd}},
      {"--timescale", {K::kInverseSqrt}},
      {"--boundaries", {K::kPiecewise}},
      {"--values", {K::kPiecewise}},
  };
  return kMap;
}

void AddScheduleOptions(CLI::App& app, Args* a) {
  ScheduleConfig& c = a->c;
  app.add_option("name", a->name,
                 "Schedule: cosine-decay, cosine-restarts, "
                 "linear-warmup, cosine-warmup, polynomial, exponential, "
                 "natural-exp, inverse-time, piecewise, one-cycle, wsd, "
                 "inverse-sqrt, constant-warmup (docs/schedule.md)")
      ->required();
  auto g = [&](CLI::Option* o) { o->group("Schedule"); };
  g(app.add_option("--max-lr", c.max_lr, "Peak / base learning rate"));
  g(app.add_option("--min-lr", c.min_lr, "Floor (default 0)"));
  g(app.add_option("--warmup-steps", c.warmup_steps, "Warmup steps"));
  g(app.add_option("--decay-steps", c.decay_steps, "Decay steps (divisor)"));
  g(app.add_option("--total-steps", c.total_steps, "Training steps (HF)"));
  g(app.add_option("--stable-steps", c.stable_steps, "WSD stable steps"));
  g(app.add_option("--period", c.period, "First cycle length T_0"));
  g(app.add_option("--period-mult", c.period_mult, "Cycle growth T_mult"));
  g(app.add_option("--decay-rate", c.decay_rate, "Decay rate"));
  g(app.add_flag("--staircase", c.staircase, "Decay in whole periods"));
  g(app.add_option("--power", c.power, "Polynomial power (default 1)"));
  g(app.add_option("--cycles", c.cycles, "Cosine cycles (default 0.5)"));
  g(app.add_option("--pct-start", c.pct_start, "Rising share (0.3)"));
  g(app.add_option("--div-factor", c.div_factor, "initial = max / this (25)"));
  g(app.add_option("--final-div-factor", c.final_div_factor,
                   "floor = initial / this (1e4)"));
  g(app.add_flag("--three-phase", c.three_phase, "One-cycle's third phase"));
  g(app.add_option("--anneal", a->anneal, "cos (default) or linear"));
  g(app.add_option("--warmup-shape", a->warmup_shape,
                   "linear (default), cosine, 1-sqrt"));
  g(app.add_option("--decay-shape", a->decay_shape,
                   "cosine (default), linear, 1-sqrt"));
  g(app.add_option("--timescale", c.timescale, "Inverse-sqrt timescale"));
  g(app.add_option("--boundaries", c.boundaries, "Piecewise: a,b,...")
        ->delimiter(','));
  g(app.add_option("--values", c.values, "Piecewise: one more than bounds")
        ->delimiter(','));
}

void AddOutputOptions(CLI::App& app, Args* a) {
  app.add_option("--steps", a->steps,
                 "Print steps below N (default: through the last step)")
      ->group("Output");
  app.add_option("--every", a->every, "Print every K-th step (default 1)")
      ->group("Output");
  app.add_option("--format", a->format, "csv (default) or json")
      ->check(CLI::IsMember({"csv", "json"}))
      ->group("Output");
  app.add_option("--plot", a->plot, "Also write an SVG plot here")
      ->group("Output");
}

Status Shape(const std::string& name, const char* flag,
             const std::string& value, RampShape* out) {
  StatusOr<RampShape> shape = RampShapeFromName(value);
  if (!shape.ok()) {
    return shape.status().WithContext("schedule " + name + " " + flag);
  }
  *out = *shape;
  return Status::Ok();
}

// Refuses options the schedule does not take, and fills in shapes.
Status Complete(const CLI::App& app, Args* a) {
  LOCKSTEP_ASSIGN_OR_RETURN(a->c.kind, ScheduleKindFromName(a->name));
  for (const auto& [flag, kinds] : OptionKinds()) {
    if (app.count(flag) == 0) continue;
    bool ok = false;
    for (K k : kinds) ok = ok || k == a->c.kind;
    if (!ok) {
      return Status::InvalidArgument(
          "schedule " + a->name,
          "option " + flag +
              " does not apply to it. Note: see "
              "'lockstep schedule --help' and docs/schedule.md");
    }
  }
  if (a->c.kind == K::kPiecewise) a->c.max_lr = 1;  // unused
  if (a->c.kind != K::kPiecewise && app.count("--max-lr") == 0) {
    return Status::InvalidArgument("schedule " + a->name,
                                   "--max-lr is required");
  }
  LOCKSTEP_RETURN_IF_ERROR(Shape(a->name, "--anneal", a->anneal, &a->c.anneal));
  LOCKSTEP_RETURN_IF_ERROR(
      Shape(a->name, "--warmup-shape", a->warmup_shape, &a->c.warmup_shape));
  LOCKSTEP_RETURN_IF_ERROR(
      Shape(a->name, "--decay-shape", a->decay_shape, &a->c.decay_shape));
  return ValidateSchedule(a->c);
}

// The steps to print, checked.
Status RowCount(const LrSchedule& s, Args* a) {
  if (a->steps == -1) {
    if (s.end_step() == LrSchedule::kNoEnd) {
      return Status::InvalidArgument(
          "schedule " + a->name,
          "has no last step. Note: say how many steps to print with --steps");
    }
    a->steps = s.end_step() + 1;
  }
  if (a->steps < 0) {
    return Status::InvalidArgument(
        "schedule --steps " + std::to_string(a->steps), "must be >= 0");
  }
  if (a->every < 1) {
    return Status::InvalidArgument(
        "schedule --every " + std::to_string(a->every), "must be >= 1");
  }
  if ((a->steps - 1) / a->every >= kMaxRows) {
    return Status::InvalidArgument(
        "schedule --steps " + std::to_string(a->steps),
        "prints more than 1e9 rows. Note: thin them with --every");
  }
  return Status::Ok();
}

std::string Shortest(double d) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), d);
  return std::string(buf, r.ptr);
}

// Prints the rows and collects them for a plot when `points` is set.
void Print(const LrSchedule& s, const Args& a, std::vector<CurvePoint>* pts) {
  bool json = a.format == "json";
  std::string out = json ? "{\"schedule\":\"" + a.name +
                               "\",\"floor\":" + Shortest(s.floor()) +
                               ",\"peak\":" + Shortest(s.peak()) +
                               ",\"points\":["
                         : "step,lr\n";
  for (int64_t step = 0; step < a.steps; step += a.every) {
    double lr = s.At(step);
    if (pts) pts->push_back({step, lr});
    if (json) {
      out += std::string(step ? "," : "") +
             "{\"step\":" + std::to_string(step) + ",\"lr\":" + Shortest(lr) +
             "}";
    } else {
      out += std::to_string(step) + "," + Shortest(lr) + "\n";
    }
    if (out.size() > (1 << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
    if (step > a.steps - a.every) break;  // no overflow past INT64_MAX
  }
  if (json) out += "]}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

Status WritePlot(const Args& a, std::vector<CurvePoint> pts) {
  CurveComparison c;
  c.options.metric = "learning_rate";
  CurveInputResult in;
  in.source = "lockstep schedule " + a.name;
  in.points = static_cast<int64_t>(pts.size());
  in.curve = std::move(pts);
  c.inputs.push_back(std::move(in));
  size_t slash = a.plot.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    LOCKSTEP_RETURN_IF_ERROR(CreateDirs(a.plot.substr(0, slash)));
  }
  return WriteFileAtomic(a.plot, RenderCurveSvg(c));
}

int Run(int argc, char** argv) {
  Args a;
  CLI::App app{
      "Print a learning-rate schedule as step,lr rows: every value lies in "
      "[min_lr, max_lr], phase ends are exact, and steps are int64."
      "\nExit: 0 printed, 2 usage error (an invalid configuration), 3 I/O.",
      "schedule"};
  app.footer(
      "Example:\n  lockstep schedule cosine-warmup --max-lr 3e-4 "
      "--warmup-steps 100 --total-steps 1000 --every 100");
  AddScheduleOptions(app, &a);
  AddOutputOptions(app, &a);
  AddLoggingOptions(app, &a.logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(a.logging);
  if (Status s = Complete(app, &a); !s.ok()) return ReportError(s);
  LrSchedule schedule = *LrSchedule::Create(a.c);
  if (Status s = RowCount(schedule, &a); !s.ok()) return ReportError(s);
  std::vector<CurvePoint> pts;
  Print(schedule, a, a.plot.empty() ? nullptr : &pts);
  if (!a.plot.empty()) {
    if (Status s = WritePlot(a, std::move(pts)); !s.ok()) return ReportError(s);
  }
  return kExitPass;
}

}  // namespace
}  // namespace schedule_cmd

int RunSchedule(int argc, char** argv) { return schedule_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
