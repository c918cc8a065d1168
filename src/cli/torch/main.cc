// lockstep-torch: the lockstep commands that need LibTorch (audit, env
// capture). `lockstep audit ...` runs it in its own place (commands.h:
// RunTorchHelper), so that the other commands start without loading
// LibTorch; it can also be run directly.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/commands.h"
#include "lockstep/core/log.h"

int main(int argc, char** argv) {
  using namespace lockstep::cli;
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "-h") == 0) {
    std::printf(
        "lockstep-torch: the lockstep commands that need LibTorch.\n\n"
        "Usage: lockstep-torch audit [options]\n"
        "       lockstep-torch replay DUMP [options]\n"
        "       lockstep-torch env capture [options]\n\n"
        "'lockstep audit', 'lockstep replay' and 'lockstep env capture' run\n"
        "this program.\n");
    return argc < 2 ? kExitUsage : kExitPass;
  }
  if (std::strcmp(argv[1], "audit") == 0) return RunAudit(argc - 1, argv + 1);
  if (std::strcmp(argv[1], "replay") == 0) {
    return RunReplay(argc - 1, argv + 1);
  }
  if (std::strcmp(argv[1], "env") == 0 && argc > 2 &&
      std::strcmp(argv[2], "capture") == 0) {
    return RunEnvCapture(argc - 2, argv + 2);
  }
  lockstep::LogError(std::string("lockstep-torch | unknown command '") +
                     argv[1] + "'. Note: run 'lockstep --help'");
  return kExitUsage;
}
