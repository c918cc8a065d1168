#include "cli/commands.h"

namespace lockstep::cli {

const std::vector<Command>& Commands() {
  static const std::vector<Command> kCommands = {};
  return kCommands;
}

}  // namespace lockstep::cli
