// A ShareGroup over an MPI communicator (lockstep-mpi only: nothing else
// links MPI).
//
// A process that waits (its share done before the others') polls its
// request and sleeps between polls instead of spinning in MPI's progress
// loop, which would take a core from the processes still comparing when
// several share a node's cores. Blobs of any size travel in chunks of at
// most 1 GiB (MPI counts are ints).
// Thread safety: call from the thread that initialized MPI only.
#ifndef LOCKSTEP_CLI_MPI_MPI_SHARE_GROUP_H_
#define LOCKSTEP_CLI_MPI_MPI_SHARE_GROUP_H_

#include <mpi.h>

#include <string>
#include <vector>

#include "lockstep/compare/compare_share.h"

namespace lockstep::cli {

class MpiShareGroup : public ShareGroup {
 public:
  // REQUIRES: MPI is initialized; `comm` outlives the group.
  explicit MpiShareGroup(MPI_Comm comm);
  int index() const override { return index_; }
  int size() const override { return size_; }
  std::vector<std::string> AllGather(const std::string& mine) override;
  std::vector<std::string> Gather(const std::string& mine) override;

 private:
  // Every process's blob size, on every process (root < 0) or on root.
  std::vector<long long> Sizes(long long mine, int root);
  MPI_Comm comm_;
  int index_ = 0, size_ = 1;
};

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_MPI_MPI_SHARE_GROUP_H_
