#include "cli/commands.h"

namespace lockstep::cli {

int RunCompare(int argc, char** argv);
int RunOverflow(int argc, char** argv);
int RunInspect(int argc, char** argv);
int RunCurve(int argc, char** argv);
int RunRng(int argc, char** argv);
int RunSchedule(int argc, char** argv);
int RunEnv(int argc, char** argv);
int RunExport(int argc, char** argv);

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"compare", RunCompare},    {"overflow", RunOverflow},
      {"inspect", RunInspect},    {"export", RunExport},
      {"curve", RunCurve},        {"rng", RunRng},
      {"schedule", RunSchedule},  {"audit", RunTorchHelper},
      {"replay", RunTorchHelper}, {"env", RunEnv},
  };
  return kCommands;
}

}  // namespace lockstep::cli
