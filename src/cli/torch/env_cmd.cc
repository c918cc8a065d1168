// lockstep env capture -o env.json: this process's environment fingerprint
// (lockstep/torch/env_capture.h).
// lockstep env diff A B: their differences, most likely to change numbers
// first (lockstep/compare/env_diff.h).
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/compare/env_diff.h"
#include "lockstep/core/file.h"
#include "lockstep/core/log.h"
#include "lockstep/format/env_fingerprint.h"
#include "lockstep/torch/env_capture.h"
#include "lockstep/torch/seed.h"

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
    "file.\n";

int Capture(int argc, char** argv) {
  std::string out;
  int64_t seed = -1;
  bool deterministic = false;
  LoggingOptions logging;
  CLI::App app{"Write this process's environment fingerprint (env.json).",
               "env capture"};
  app.add_option("-o,--output", out, "Output file (default: stdout)");
  app.add_option("--seed", seed,
                 "Call SeedAll(seed, --deterministic) first, so the "
                 "fingerprint records a seeded run's settings")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--deterministic", deterministic,
               "With --seed: deterministic algorithms on");
  AddLoggingOptions(app, &logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(logging);
  if (deterministic && seed < 0) {
    return ReportError(Status::InvalidArgument(
        "env capture --deterministic", "needs --seed. Note: add --seed 0"));
  }
  if (!out.empty()) {
    if (Status s = CheckOutputFile(out); !s.ok()) return ReportError(s);
  }
  if (seed >= 0) SeedAll(static_cast<uint64_t>(seed), deterministic);
  StatusOr<EnvFingerprint> fp = CaptureEnvFingerprint();
  if (!fp.ok()) return ReportError(fp.status());
  if (out.empty()) {
    std::fputs(EncodeEnvFingerprint(*fp).c_str(), stdout);
    return kExitPass;
  }
  if (Status s = WriteEnvFingerprintFile(out, *fp); !s.ok()) {
    return ReportError(s);
  }
  LogInfo("wrote " + out + " (" + std::to_string(fp->fields.size()) +
          " fields)");
  return kExitPass;
}

int Diff(int argc, char** argv) {
  std::string a_path, b_path;
  LoggingOptions logging;
  CLI::App app{
      "List the differences of two environment fingerprints, most likely to "
      "change numbers first.\nExit: 0 same where it matters, 1 differences "
      "that may change numbers, 2 usage error, 3 unreadable file.",
      "env diff"};
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
  if (std::strcmp(argv[1], "capture") == 0) return Capture(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "diff") == 0) return Diff(argc - 1, argv + 1);
  LogError(std::string("env | unknown subcommand '") + argv[1] +
           "'. Note: use 'lockstep env capture' or 'lockstep env diff'");
  return kExitUsage;
}

}  // namespace
}  // namespace env_cmd

int RunEnv(int argc, char** argv) { return env_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
