// lockstep replay: re-runs the operators of a tensor-mode dump in float64 on
// the CPU and names the ones whose recorded results are wrong for their own
// inputs (lockstep/torch/replay.h), with no baseline run.
//
// Exit codes: 0 no suspect; 1 a suspect; 2 usage error; 3 the dump or the
// output directory cannot be read or written.
#include <ATen/Parallel.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/core/file.h"
#include "lockstep/core/log.h"
#include "lockstep/core/progress.h"
#include "lockstep/report/replay_report.h"
#include "lockstep/torch/replay.h"

namespace lockstep::cli {
namespace replay_cmd {  // named: the CLI builds as a unity build
namespace {

int Run(int argc, char** argv) {
  ReplayOptions options;
  std::string out = "./output";
  bool no_backward = false;
  LoggingOptions logging;
  CLI::App app{
      "Replay every operator of a tensor-mode dump (lockstep's or "
      "msprobe's, .pt or .npy) on the CPU in float64 and name the first "
      "whose recorded result is wrong for its own inputs: no baseline run "
      "needed. Each recorded output (and, for backward entries, each input "
      "gradient) is measured in ulps of its dtype against the float64 "
      "replay and checked against a bound per operator kind (elementwise, "
      "sums of k products, normalisations; docs/replay.md), or 2x LibTorch "
      "CPU's own error on the same inputs if that is larger. Entries that "
      "cannot be replayed (random ops, collectives, indexing, ...) are "
      "listed with why. Only an allowlist of pure tensor operators runs, "
      "each call within a memory budget and a time limit (a dump.json can "
      "name any operator; docs/replay.md#allowlist). A dump of the probe's "
      "shadow task (checked as the "
      "run went, no tensors) is read back the same way.\nWrites replay.csv, "
      "summary.json and report.html "
      "into -o.\nExit: 0 no suspect, 1 a suspect, 2 usage error (also: "
      "nothing could be replayed, e.g. a statistics dump), 3 unreadable "
      "dump or unwritable output.",
      "replay"};
  app.add_option("dump", options.dump,
                 "Tensor-mode (or shadow) dump: its root, a step{N} dir or "
                 "a rank dir")
      ->required();
  app.add_option("-o,--output", out, "Output directory (default ./output)");
  app.add_option("--step", options.steps, "Replay only these steps");
  app.add_option("--rank", options.ranks, "Replay only these ranks");
  app.add_flag("--no-backward", no_backward, "Skip backward entries");
  app.add_option("-j,--jobs", options.jobs,
                 "Entries replayed at once (default 1)")
      ->check(CLI::Range(1, 256));
  app.add_option("--max-call-memory", options.max_call_memory,
                 "Memory one replayed call may hold at once, e.g. 512M or "
                 "4G (default: 16x the bytes of its tensors in float64, at "
                 "least 64M); a call estimated or found to need more is "
                 "refused")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::PositiveNumber);
  app.add_option("--max-call-seconds", options.max_call_seconds,
                 "Seconds one entry's replay may take (default 60); the "
                 "entries run in a child process that is stopped past it. 0: "
                 "no limit, in this process")
      ->check(CLI::Range(0.0, 1e6));
  app.footer(
      "Example:\n  lenet --steps 1 --dump run --task tensor --fault "
      "conv2-bf16\n  lockstep replay run -o replay_out");
  AddLoggingOptions(app, &logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(logging);
  options.backward = !no_backward;
  if (!PathExists(options.dump)) {
    return ReportError(Status::NotFound(options.dump,
                                        "no such file or "
                                        "directory"));
  }
  // Before the work, not after it.
  if (Status s = CreateDirs(out); !s.ok()) return ReportError(s);
  if (Status s = CheckOutputFile(out + "/summary.json"); !s.ok()) {
    return ReportError(s);
  }
  at::set_num_threads(options.jobs > 1 ? 1 : 2);
  auto progress = std::make_unique<Progress>("replay", "entries");
  options.progress = [&](size_t done, size_t total) {
    progress->Update(done, total);
  };
  StatusOr<ReplayResult> result = ReplayDump(options);
  progress.reset();
  if (!result.ok()) return ReportError(result.status());
  for (const std::string& w : result->warnings) LogWarning(w);
  if (Status s = WriteReplayReports(*result, out); !s.ok()) {
    return ReportError(s);
  }
  std::printf("%s", ReplayTerminalSummary(*result).c_str());
  std::printf("wrote %s/replay.csv, summary.json, report.html\n", out.c_str());
  std::fflush(stdout);
  if (result->replayed == 0) {
    // No check ran: "no suspect" would be a pass nobody earned.
    std::string why;
    for (const ReplayCheck& c : result->checks) {
      if (c.verdict == ReplayVerdict::kNotReplayable) {
        why = " (e.g. " + c.entry + ": " + c.reason + ")";
        break;
      }
    }
    LogError("replay | nothing was replayed" + why +
             ". Note: replay needs a dump of task tensor or shadow");
    return kExitUsage;
  }
  return result->first_suspect ? kExitDiverged : kExitPass;
}

}  // namespace
}  // namespace replay_cmd

int RunReplay(int argc, char** argv) { return replay_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
