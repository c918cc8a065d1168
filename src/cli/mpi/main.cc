// lockstep-mpi: `lockstep compare` shared among MPI processes. `lockstep
// compare` runs it in its place when mpirun or srun started several
// processes (mpi_helper.cc); it may also be started directly:
//   mpirun -n 4 lockstep-mpi compare TARGET BASELINE -o OUT
// Process 0 prints and writes everything; the others print nothing (set
// LOCKSTEP_MPI_VERBOSE=1 to see their output) and exit with its code.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli/commands.h"
#include "cli/mpi/mpi_share_group.h"

int main(int argc, char** argv) {
  int provided = 0;
  // Compares run threads of their own; only the main thread calls MPI.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int code;
  {
    lockstep::cli::MpiShareGroup group(MPI_COMM_WORLD);
    if (group.index() > 0 && std::getenv("LOCKSTEP_MPI_VERBOSE") == nullptr) {
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    if (argc < 2 || std::strcmp(argv[1], "compare") != 0) {
      std::fprintf(stderr,
                   "[E] lockstep-mpi | runs one command: compare. Note: "
                   "mpirun -n P lockstep compare TARGET BASELINE -o OUT\n");
      code = lockstep::cli::kExitUsage;
    } else {
      code = lockstep::cli::RunCompareShared(argc - 1, argv + 1, &group);
    }
  }
  // Process 0's printed lines leave it before any process may exit: mpirun
  // ends the whole job once one exits with a code other than 0, and a
  // process 0 killed then loses what its stdout still held (every exit
  // path, errors included, passes here).
  std::fflush(nullptr);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}
