// c10d's Gloo process group is compiled only where this macro is defined
// (LibTorch's own build defines it; its installed headers do not).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO 1
#endif

#include "lockstep/torch/gloo_group.h"

#include <ATen/ATen.h>

#include <exception>
#include <string>
#include <utility>

// LibTorch's own headers install without Gloo's in some packagings (the
// PyTorch wheels): there the group is not built and Connect says so.
#if __has_include(<gloo/algorithm.h>)
#define LOCKSTEP_HAVE_GLOO 1
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif

namespace lockstep {

#ifdef LOCKSTEP_HAVE_GLOO
struct GlooGroup::Impl {
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;
  std::chrono::milliseconds timeout;
};

namespace {

std::string Subject(int rank) {
  return "gloo group (rank " + std::to_string(rank) + ")";
}

Status Wait(const c10::intrusive_ptr<c10d::Work>& work,
            std::chrono::milliseconds timeout, int rank, const char* what) {
  try {
    work->wait(timeout);
  } catch (const std::exception& e) {
    return Status::IoError(Subject(rank), std::string(what) +
                                              " failed: " + e.what() +
                                              ". Note: did a rank exit?");
  }
  return Status::Ok();
}

}  // namespace

GlooGroup::GlooGroup(std::unique_ptr<Impl> impl, int rank, int world_size)
    : impl_(std::move(impl)), rank_(rank), world_size_(world_size) {}

GlooGroup::~GlooGroup() = default;

StatusOr<std::unique_ptr<GlooGroup>> GlooGroup::Connect(
    const GlooGroupOptions& o) {
  if (o.world_size < 1 || o.rank < 0 || o.rank >= o.world_size) {
    return Status::InvalidArgument(
        Subject(o.rank),
        "rank must be in [0, world_size " + std::to_string(o.world_size) + ")");
  }
  if (o.store_path.empty()) {
    return Status::InvalidArgument(Subject(o.rank), "empty store path");
  }
  auto impl = std::make_unique<Impl>();
  impl->timeout = o.timeout;
  try {
    auto store =
        c10::make_intrusive<c10d::FileStore>(o.store_path, o.world_size);
    store->setTimeout(o.timeout);
    auto options = c10d::ProcessGroupGloo::Options::create(o.timeout);
    options->devices.push_back(
        c10d::ProcessGroupGloo::createDeviceForHostname(o.hostname));
    impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(
        store, o.rank, o.world_size, options);
  } catch (const std::exception& e) {
    return Status::IoError(Subject(o.rank), std::string("rendezvous at '") +
                                                o.store_path +
                                                "' failed: " + e.what());
  }
  return std::unique_ptr<GlooGroup>(
      new GlooGroup(std::move(impl), o.rank, o.world_size));
}

StatusOr<bool> GlooGroup::AnyRank(bool local_found_inf) {
  std::vector<at::Tensor> flag = {
      at::full({1}, local_found_inf ? 1.0f : 0.0f, at::kFloat)};
  c10d::AllreduceOptions opts;
  opts.reduceOp = c10d::ReduceOp::MAX;
  try {
    LOCKSTEP_RETURN_IF_ERROR(Wait(impl_->pg->allreduce(flag, opts),
                                  impl_->timeout, rank_,
                                  "found-inf all-reduce"));
  } catch (const std::exception& e) {
    return Status::IoError(Subject(rank_), e.what());
  }
  return flag[0].item<float>() > 0.0f;
}

Status GlooGroup::AllReduceMean(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> defined;
  for (const at::Tensor& t : tensors) {
    if (t.defined()) defined.push_back(t);
  }
  if (defined.empty()) return Status::Ok();
  // One flat buffer: one collective instead of one per tensor.
  at::Tensor flat = at::cat(
      [&] {
        std::vector<at::Tensor> views;
        for (const at::Tensor& t : defined) views.push_back(t.reshape({-1}));
        return views;
      }(),
      0);
  std::vector<at::Tensor> buf = {flat};
  try {
    LOCKSTEP_RETURN_IF_ERROR(Wait(impl_->pg->allreduce(buf), impl_->timeout,
                                  rank_, "gradient all-reduce"));
  } catch (const std::exception& e) {
    return Status::IoError(Subject(rank_), e.what());
  }
  flat.div_(world_size_);
  int64_t offset = 0;
  for (const at::Tensor& t : defined) {
    int64_t n = t.numel();
    t.copy_(flat.narrow(0, offset, n).view_as(t));
    offset += n;
  }
  return Status::Ok();
}

Status GlooGroup::Barrier() {
  try {
    return Wait(impl_->pg->barrier(), impl_->timeout, rank_, "barrier");
  } catch (const std::exception& e) {
    return Status::IoError(Subject(rank_), e.what());
  }
}

#else  // !LOCKSTEP_HAVE_GLOO

struct GlooGroup::Impl {};

GlooGroup::GlooGroup(std::unique_ptr<Impl> impl, int rank, int world_size)
    : impl_(std::move(impl)), rank_(rank), world_size_(world_size) {}

GlooGroup::~GlooGroup() = default;

namespace {

Status NoGloo(int rank) {
  return Status::NotSupported(
      "gloo group (rank " + std::to_string(rank) + ")",
      "this LibTorch was installed without Gloo's headers (gloo/algorithm.h)");
}

}  // namespace

StatusOr<std::unique_ptr<GlooGroup>> GlooGroup::Connect(
    const GlooGroupOptions& o) {
  return NoGloo(o.rank);
}

StatusOr<bool> GlooGroup::AnyRank(bool) { return NoGloo(rank_); }

Status GlooGroup::AllReduceMean(const std::vector<at::Tensor>&) {
  return NoGloo(rank_);
}

Status GlooGroup::Barrier() { return NoGloo(rank_); }

#endif  // LOCKSTEP_HAVE_GLOO

}  // namespace lockstep
