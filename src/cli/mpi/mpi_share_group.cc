#include "cli/mpi/mpi_share_group.h"

#include <time.h>

#include <algorithm>

namespace lockstep::cli {
namespace {

constexpr long long kChunk = 1LL << 30;  // bytes per message, at most

// Waits for `requests`, sleeping 0.2 ms between polls (see the header).
void WaitAll(std::vector<MPI_Request>* requests) {
  if (requests->empty()) return;
  for (;;) {
    int done = 0;
    MPI_Testall(static_cast<int>(requests->size()), requests->data(), &done,
                MPI_STATUSES_IGNORE);
    if (done) return;
    timespec pause{0, 200000};
    nanosleep(&pause, nullptr);
  }
}

// Posts the sends (or receives) of `n` bytes at `data` in chunks, tagged by
// chunk number.
void PostChunks(char* data, long long n, int peer, bool send, MPI_Comm comm,
                std::vector<MPI_Request>* requests) {
  for (long long at = 0, tag = 0; at < n; at += kChunk, ++tag) {
    int count = static_cast<int>(std::min(kChunk, n - at));
    MPI_Request r;
    if (send) {
      MPI_Isend(data + at, count, MPI_BYTE, peer, static_cast<int>(tag), comm,
                &r);
    } else {
      MPI_Irecv(data + at, count, MPI_BYTE, peer, static_cast<int>(tag), comm,
                &r);
    }
    requests->push_back(r);
  }
}

}  // namespace

MpiShareGroup::MpiShareGroup(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &index_);
  MPI_Comm_size(comm_, &size_);
}

std::vector<long long> MpiShareGroup::Sizes(long long mine, int root) {
  std::vector<long long> sizes(static_cast<size_t>(size_));
  std::vector<MPI_Request> r(1);
  if (root < 0) {
    MPI_Iallgather(&mine, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG,
                   comm_, r.data());
  } else {
    MPI_Igather(&mine, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, root,
                comm_, r.data());
  }
  WaitAll(&r);
  return sizes;
}

// The messages of AllGather are small (a status, a digest): gathered by
// process 0 and sent on whole.
std::vector<std::string> MpiShareGroup::AllGather(const std::string& mine) {
  std::vector<std::string> all = Gather(mine);
  std::vector<long long> sizes(static_cast<size_t>(size_));
  if (index_ == 0) {
    for (int i = 0; i < size_; ++i)
      sizes[i] = static_cast<long long>(all[i].size());
  }
  std::vector<MPI_Request> r(1);
  MPI_Ibcast(sizes.data(), size_, MPI_LONG_LONG, 0, comm_, r.data());
  WaitAll(&r);
  r.clear();
  all.resize(static_cast<size_t>(size_));
  for (int i = 0; i < size_; ++i) {
    all[i].resize(static_cast<size_t>(sizes[i]));
    if (sizes[i] == 0) continue;
    MPI_Request b;
    MPI_Ibcast(all[i].data(), static_cast<int>(sizes[i]), MPI_BYTE, 0, comm_,
               &b);
    r.push_back(b);
  }
  WaitAll(&r);
  return all;
}

std::vector<std::string> MpiShareGroup::Gather(const std::string& mine) {
  std::vector<long long> sizes = Sizes(static_cast<long long>(mine.size()), 0);
  std::vector<MPI_Request> r;
  std::vector<std::string> all;
  if (index_ != 0) {
    PostChunks(const_cast<char*>(mine.data()),
               static_cast<long long>(mine.size()), 0, true, comm_, &r);
    WaitAll(&r);
    return all;
  }
  all.resize(static_cast<size_t>(size_));
  all[0] = mine;
  for (int i = 1; i < size_; ++i) {
    all[i].resize(static_cast<size_t>(sizes[i]));
    PostChunks(all[i].data(), sizes[i], i, false, comm_, &r);
  }
  WaitAll(&r);
  return all;
}

}  // namespace lockstep::cli
