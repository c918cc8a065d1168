// The CLI's command table. Each command lives in its own <name>_cmd.cc.
#ifndef LOCKSTEP_CLI_COMMANDS_H_
#define LOCKSTEP_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace lockstep {
class ShareGroup;  // lockstep/compare/compare_share.h
}  // namespace lockstep

namespace lockstep::cli {

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);  // argv[0] is the command name
};

// Registered commands, in --help order.
const std::vector<Command>& Commands();

// The commands that need LibTorch (audit, replay, env capture) run in a second
// executable, lockstep-torch, beside `lockstep` (so that every other
// command starts without loading LibTorch's ~290 shared libraries). Runs
// it with argv[0..argc) (argv[0] is the command name) in place of this
// process (exec: its output and exit code are the command's); returns
// kExitUsage with a message when it cannot, e.g. in a build without
// LibTorch.
int RunTorchHelper(int argc, char** argv);

// Whether lockstep-torch was built with this lockstep (a LibTorch build).
bool HaveTorchHelper();

// lockstep-torch's own commands (src/cli/torch/).
int RunAudit(int argc, char** argv);
int RunEnvCapture(int argc, char** argv);
int RunReplay(int argc, char** argv);

// `lockstep compare` among the processes of `group` (null: alone), for
// lockstep-mpi (src/cli/mpi/); every process returns the same exit code.
int RunCompareShared(int argc, char** argv, ShareGroup* group);

// Whether this process was started by mpirun or srun as one of several
// (OMPI_COMM_WORLD_SIZE, PMI_SIZE or SLURM_STEP_NUM_TASKS above 1; with
// LOCKSTEP_MPI=0 never, =1 always). `lockstep compare` then runs
// lockstep-mpi in its place (RunMpiHelper), which links MPI so that
// `lockstep` itself does not.
bool StartedByMpi();
int RunMpiHelper(int argc, char** argv);

// The directory of the running executable ("" when unknown): helpers are
// found beside it.
std::string ExecutableDir();

// Exit codes (docs/architecture.md, "Adding a command").
inline constexpr int kExitPass = 0;
inline constexpr int kExitDiverged = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitIo = 3;

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_COMMANDS_H_
