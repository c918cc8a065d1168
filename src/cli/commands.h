// The CLI's command table. Each command lives in its own <name>_cmd.cc.
#ifndef LOCKSTEP_CLI_COMMANDS_H_
#define LOCKSTEP_CLI_COMMANDS_H_

#include <vector>

namespace lockstep::cli {

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);  // argv[0] is the command name
};

// Registered commands, in --help order.
const std::vector<Command>& Commands();

// Exit codes (STYLE.md §8).
inline constexpr int kExitPass = 0;
inline constexpr int kExitDiverged = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitIo = 3;

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_COMMANDS_H_
