// `lockstep compare` started by mpirun or srun as one of several processes:
// lockstep-mpi, the executable that links MPI, runs in its place (exec), so
// that `lockstep` itself starts without loading MPI (commands.h).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "lockstep/core/log.h"

namespace lockstep::cli {
namespace {

constexpr char kMpiHelperName[] = "lockstep-mpi";

// The number in the environment variable `name` (0 when unset or not one).
long EnvNumber(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? 0 : std::strtol(v, nullptr, 10);
}

}  // namespace

bool StartedByMpi() {
  if (const char* force = std::getenv("LOCKSTEP_MPI"); force && *force)
    return std::strcmp(force, "0") != 0;
  return EnvNumber("OMPI_COMM_WORLD_SIZE") > 1 || EnvNumber("PMI_SIZE") > 1 ||
         (std::getenv("SLURM_PROCID") != nullptr &&
          EnvNumber("SLURM_STEP_NUM_TASKS") > 1);
}

int RunMpiHelper(int argc, char** argv) {
  std::string helper = ExecutableDir() + "/" + kMpiHelperName;
  std::vector<char*> args;
  args.push_back(const_cast<char*>(kMpiHelperName));
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(helper.c_str(), args.data());
  int err = errno;
  LogError(std::string("compare | started by mpirun/srun as one of several "
                       "processes, and ") +
           helper + " cannot run: " + std::strerror(err) +
           ". Note: build lockstep with Open MPI (apt-get install "
           "libopenmpi-dev; cmake -DLOCKSTEP_WITH_MPI=ON), or start one "
           "process");
  return kExitUsage;
}

int RunCompare(int argc, char** argv) {
  if (StartedByMpi()) return RunMpiHelper(argc, argv);
  return RunCompareShared(argc, argv, nullptr);
}

}  // namespace lockstep::cli
