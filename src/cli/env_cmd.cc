// lockstep env diff A B: the differences of two environment fingerprints,
// most likely to change numbers first (lockstep/compare/env_diff.h).
// lockstep env capture needs LibTorch: it runs in lockstep-torch
// (src/cli/torch/env_capture_cmd.cc), reached through RunTorchHelper.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/compare/env_diff.h"
#include "lockstep/core/log.h"
#include "lockstep/format/env_fingerprint.h"

namespace lockstep::cli {
namespace env_cmd {  // named: the CLI builds as a unity build
namespace {

constexpr char kUsage[] =
    "Usage: lockstep env capture [-o env.json] [--seed S [--deterministic]]\n"
    "       lockstep env diff A.json B.json\n\n"
    "capture  write this process's environment fingerprint: LibTorch build,\n"
    "         BLAS, CPU features, thread counts, numerics environment\n"
    "         variables, seeds and deterministic flags (stdout without -o)\n"
    "diff     list the differences of two fingerprints, most likely to\n"
    "         change numbers first\n\n"
    "Exit: 0 same (or only differences without effect, e.g. hostname),\n"
    "1 differences that may change numbers, 2 usage error, 3 unreadable "
    "file.\n\n"
    "Example:\n"
    "  lockstep env capture -o gpu_env.json\n"
    "  lockstep env diff gpu_env.json npu_env.json\n";

int Diff(int argc, char** argv) {
  std::string a_path, b_path;
  LoggingOptions logging;
  CLI::App app{
      "List the differences of two environment fingerprints, most likely to "
      "change numbers first.\nExit: 0 same where it matters, 1 differences "
      "that may change numbers, 2 usage error, 3 unreadable file.",
      "env diff"};
  app.footer(
      "Example:\n  lockstep env diff gpu_dump/env.json npu_dump/env.json");
  app.add_option("A", a_path, "First env.json (shown left)")->required();
  app.add_option("B", b_path, "Second env.json (shown right)")->required();
  AddLoggingOptions(app, &logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(logging);
  StatusOr<EnvFingerprint> a = ReadEnvFingerprint(a_path);
  if (!a.ok()) return ReportError(a.status());
  StatusOr<EnvFingerprint> b = ReadEnvFingerprint(b_path);
  if (!b.ok()) return ReportError(b.status());
  EnvDiff diff = DiffEnvFingerprints(*a, *b);
  LogInfo("a = " + a_path + ", b = " + b_path);
  for (size_t i = 0; i < diff.differences.size(); ++i) {
    std::printf(
        "%3zu. %s\n", i + 1,
        EscapeControl(DescribeEnvDifference(diff.differences[i])).c_str());
  }
  size_t relevant = diff.relevant();
  size_t other = diff.differences.size() - relevant;
  if (relevant == 0) {
    std::printf(
        "ENV SAME: no difference that may change numbers (%zu "
        "without effect)\n",
        other);
    return kExitPass;
  }
  std::printf(
      "ENV DIFFERENT: %zu difference(s) that may change numbers, "
      "most likely %s; %zu without effect\n",
      relevant, EscapeControl(diff.differences[0].key).c_str(), other);
  return kExitDiverged;
}

int Run(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "-h") == 0) {
    std::printf("%s", kUsage);
    return argc < 2 ? kExitUsage : kExitPass;
  }
  if (std::strcmp(argv[1], "capture") == 0) {
    return RunTorchHelper(argc, argv);  // lockstep-torch env capture ...
  }
  if (std::strcmp(argv[1], "diff") == 0) return Diff(argc - 1, argv + 1);
  LogError(std::string("env | unknown subcommand '") + argv[1] +
           "'. Note: use 'lockstep env capture' or 'lockstep env diff'");
  return kExitUsage;
}

}  // namespace
}  // namespace env_cmd

int RunEnv(int argc, char** argv) { return env_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
