// lockstep env capture -o env.json: this process's environment fingerprint
// (lockstep/torch/env_capture.h). Runs in lockstep-torch.
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/core/file.h"
#include "lockstep/core/log.h"
#include "lockstep/format/env_fingerprint.h"
#include "lockstep/torch/env_capture.h"
#include "lockstep/torch/seed.h"

namespace lockstep::cli {

int RunEnvCapture(int argc, char** argv) {
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

}  // namespace lockstep::cli
