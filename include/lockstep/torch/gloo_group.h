// A c10d process group over Gloo (TCP on loopback or a named host), as an
// OverflowAgreement for GradScaler and as the gradient all-reduce of a small
// data-parallel loop. c10d and Gloo headers stay in src/torch/gloo_group.cc.
//
// Rendezvous is a c10d::FileStore: every rank passes the same file path (on
// a filesystem all ranks see) and the world size. The file is created by
// the first rank and should be removed after the run.
//
// Thread safety: one thread at a time (collectives are ordered).
#ifndef LOCKSTEP_TORCH_GLOO_GROUP_H_
#define LOCKSTEP_TORCH_GLOO_GROUP_H_

#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/torch/overflow_agreement.h"

namespace lockstep {

struct GlooGroupOptions {
  std::string store_path;              // FileStore path, the same on every rank
  int rank = 0;                        // in [0, world_size)
  int world_size = 1;                  // >= 1
  std::string hostname = "127.0.0.1";  // the interface Gloo binds to
  // Rendezvous and every collective fail after this long.
  std::chrono::milliseconds timeout{30000};
};

class GlooGroup : public OverflowAgreement {
 public:
  // Joins the group; blocks until all world_size ranks have joined.
  // Errors: InvalidArgument for a bad rank/world size or empty path,
  // IoError when rendezvous fails or times out.
  static StatusOr<std::unique_ptr<GlooGroup>> Connect(
      const GlooGroupOptions& options);
  ~GlooGroup() override;

  StatusOr<bool> AnyRank(bool local_found_inf) override;
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }

  // Replaces each tensor with the mean over ranks (all-reduce SUM / world),
  // e.g. the gradients of a data-parallel step. Undefined tensors are left
  // out. REQUIRES: the same shapes and dtypes, in the same order, on every
  // rank; CPU tensors.
  Status AllReduceMean(const std::vector<at::Tensor>& tensors);

  // Blocks until every rank has arrived.
  Status Barrier();

 private:
  struct Impl;
  GlooGroup(std::unique_ptr<Impl> impl, int rank, int world_size);

  std::unique_ptr<Impl> impl_;
  int rank_;
  int world_size_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_GLOO_GROUP_H_
