#include "cli/commands.h"

namespace lockstep::cli {

int RunCompare(int argc, char** argv);
int RunOverflow(int argc, char** argv);
int RunInspect(int argc, char** argv);
int RunCurve(int argc, char** argv);
int RunRng(int argc, char** argv);
int RunSchedule(int argc, char** argv);
#ifdef LOCKSTEP_HAVE_TORCH
int RunAudit(int argc, char** argv);
int RunEnv(int argc, char** argv);
#endif

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {
      {"compare", RunCompare}, {"overflow", RunOverflow},
      {"inspect", RunInspect}, {"curve", RunCurve},
      {"rng", RunRng},         {"schedule", RunSchedule},
#ifdef LOCKSTEP_HAVE_TORCH
      {"audit", RunAudit},     {"env", RunEnv},
#endif
  };
  return kCommands;
}

}  // namespace lockstep::cli
