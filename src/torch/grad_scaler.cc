#include "lockstep/torch/grad_scaler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/optim/optimizer.h>

#include <atomic>
#include <exception>
#include <set>
#include <utility>

#include "lockstep/core/parallel.h"
#include "lockstep/torch/overflow_agreement.h"
#include "lockstep/torch/overflow_status.h"
#include "torch/grad_scaler_kernel.h"

namespace lockstep {
namespace {

constexpr std::string_view kSubject = "GradScaler";
// Gradients below this many elements in all are unscaled on one thread:
// starting threads costs more than the pass.
constexpr size_t kParallelMinElements = size_t{1} << 20;
constexpr size_t kChunkElements = size_t{1} << 18;

Status Misuse(std::string_view problem) {
  return Status::InvalidArgument(kSubject, problem);
}

bool UsesValues(OverflowCheck c) { return c != OverflowCheck::kStatus; }
bool UsesStatus(OverflowCheck c) { return c != OverflowCheck::kValue; }

// One piece of the fused pass: [begin, end) of a float or double buffer.
struct Chunk {
  void* data;
  bool is_double;
  size_t begin, end;
};

bool RunChunk(const Chunk& c, double inv) {
  if (c.is_double) {
    return internal::UnscaleAndCheck(static_cast<double*>(c.data) + c.begin,
                                     c.end - c.begin, inv);
  }
  return internal::UnscaleAndCheck(static_cast<float*>(c.data) + c.begin,
                                   c.end - c.begin, static_cast<float>(inv));
}

// Unscales every gradient in `grads` by `inv`; returns whether any result is
// inf or NaN. Contiguous CPU float/double gradients go through the fused
// kernel; the others through ATen with one synchronisation at the end.
bool UnscaleGradients(const std::vector<at::Tensor>& grads, double inv,
                      int threads) {
  std::vector<Chunk> chunks;
  size_t total = 0;
  at::Tensor slow_found;  // a bool tensor on the gradients' device
  for (const at::Tensor& g : grads) {
    bool fused =
        g.device().is_cpu() && g.is_contiguous() &&
        (g.scalar_type() == at::kFloat || g.scalar_type() == at::kDouble);
    if (!fused) {
      g.mul_(inv);
      at::Tensor bad = at::isfinite(g).logical_not().any();
      slow_found = slow_found.defined()
                       ? slow_found.logical_or(bad.to(slow_found.device()))
                       : bad;
      continue;
    }
    size_t n = static_cast<size_t>(g.numel());
    for (size_t b = 0; b < n; b += kChunkElements) {
      chunks.push_back({g.data_ptr(), g.scalar_type() == at::kDouble, b,
                        std::min(n, b + kChunkElements)});
    }
    total += n;
  }
  bool found = false;
  if (threads <= 1 || total < kParallelMinElements) {
    for (const Chunk& c : chunks) found |= RunChunk(c, inv);
  } else {
    std::atomic<bool> any{false};
    ParallelFor(chunks.size(), threads, [&](size_t i) {
      if (RunChunk(chunks[i], inv)) any.store(true, std::memory_order_relaxed);
    });
    found = any.load();
  }
  if (slow_found.defined()) found |= slow_found.item<bool>();
  return found;
}

}  // namespace

const char* OverflowCheckName(OverflowCheck c) {
  switch (c) {
    case OverflowCheck::kValue:
      return "value";
    case OverflowCheck::kStatus:
      return "status";
    case OverflowCheck::kValueAndStatus:
      return "value+status";
  }
  return "unknown";
}

const char* StepModeName(StepMode m) {
  return m == StepMode::kJoint ? "joint" : "per-optimizer";
}

GradScaler::GradScaler(GradScalerOptions options, LossScaleState state)
    : options_(std::move(options)), state_(std::move(state)) {}

StatusOr<GradScaler> GradScaler::Create(GradScalerOptions options) {
  Status s = LossScaleState::Validate(options.loss_scale);
  if (!s.ok()) return s.WithContext(kSubject);
  if (options.threads < 0) {
    return Misuse("threads " + std::to_string(options.threads) +
                  ": must be >= 0 (0 = at::get_num_threads())");
  }
  LossScaleState state(options.loss_scale);
  return GradScaler(std::move(options), std::move(state));
}

StatusOr<GradScaler> GradScaler::FromSpec(std::string_view spec,
                                          GradScalerOptions options) {
  StatusOr<LossScaleOptions> ls = ParseLossScaleSpec(spec);
  if (!ls.ok()) return ls.status();
  options.loss_scale = *ls;
  return Create(std::move(options));
}

at::Tensor GradScaler::Scale(const at::Tensor& loss) const {
  return loss.mul(state_.scale());
}

void GradScaler::SetStatus(const torch::optim::Optimizer& opt,
                           FloatStatus* status) {
  per_opt_[&opt].status = status;
}

StatusOr<bool> GradScaler::CheckAndUnscale(torch::optim::Optimizer& opt) {
  std::vector<at::Tensor> grads;
  for (auto& group : opt.param_groups()) {
    for (const at::Tensor& p : group.params()) {
      const at::Tensor& g = p.grad();
      if (!g.defined()) continue;
      if (g.is_sparse()) {
        return Status::NotSupported(kSubject,
                                    "sparse gradients cannot be unscaled");
      }
      grads.push_back(g);
    }
  }
  int threads = options_.threads > 0 ? options_.threads : at::get_num_threads();
  bool value_inf = false;
  try {
    value_inf = UnscaleGradients(grads, 1.0 / state_.scale(), threads);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(kSubject,
                                   std::string("unscale failed: ") + e.what());
  }
  return value_inf;
}

Status GradScaler::Unscale(torch::optim::Optimizer& opt) {
  PerOptimizer& s = per_opt_[&opt];
  if (s.stage == Stage::kUnscaled) {
    return Misuse(
        "Unscale() was already called for this optimizer since the last "
        "Update(). Note: unscale once per iteration; Step() does not unscale "
        "again");
  }
  if (s.stage == Stage::kStepped) {
    return Misuse(
        "Unscale() called after Step() for this optimizer. Note: "
        "call Update() to start the next iteration");
  }
  if (options_.mode == StepMode::kJoint && joint_decided_) {
    return Misuse(
        "joint mode: Unscale() after the joint step decision. "
        "Note: unscale every optimizer (or use StepAll) before "
        "the first Step()");
  }
  FloatStatus* status = s.status != nullptr ? s.status : options_.status;
  if (UsesStatus(options_.check) && status == nullptr) {
    return Misuse(std::string("check '") + OverflowCheckName(options_.check) +
                  "' has no FloatStatus to read. Note: set "
                  "GradScalerOptions::status or call SetStatus()");
  }
  StatusOr<bool> value_inf = CheckAndUnscale(opt);
  if (!value_inf.ok()) return value_inf.status();
  bool local = (UsesValues(options_.check) && *value_inf) ||
               (UsesStatus(options_.check) && status->Test());
  bool agreed = local;
  if (options_.agreement != nullptr) {
    StatusOr<bool> any = options_.agreement->AnyRank(local);
    if (!any.ok()) return any.status().WithContext(kSubject);
    agreed = *any;
  }
  s.found_inf_local = local;
  s.found_inf = agreed;
  s.stage = Stage::kUnscaled;
  return Status::Ok();
}

bool GradScaler::JointFoundInf() const {
  for (const auto& [opt, s] : per_opt_) {
    if (s.stage != Stage::kReady && s.found_inf) return true;
  }
  return false;
}

bool GradScaler::SkipStep(const PerOptimizer& s) const {
  const LossScaleOptions& o = options_.loss_scale;
  bool skip_on_overflow = o.dynamic || o.drop_overflow_update;
  bool found =
      options_.mode == StepMode::kJoint ? joint_found_inf_ : s.found_inf;
  return found && skip_on_overflow;
}

StatusOr<bool> GradScaler::Step(torch::optim::Optimizer& opt) {
  PerOptimizer& s = per_opt_[&opt];
  if (s.stage == Stage::kStepped) {
    return Misuse(
        "Step() was already called for this optimizer since the "
        "last Update(). Note: call Update() once per iteration");
  }
  if (s.stage == Stage::kReady) LOCKSTEP_RETURN_IF_ERROR(Unscale(opt));
  if (options_.mode == StepMode::kJoint && !joint_decided_) {
    joint_found_inf_ = JointFoundInf();
    joint_decided_ = true;
  }
  s.stage = Stage::kStepped;  // (map nodes survive a rehash)
  if (SkipStep(s)) {
    ++s.skipped;
    return false;
  }
  try {
    opt.step();
  } catch (const std::exception& e) {
    return Status::InvalidArgument("optimizer step", e.what());
  }
  ++s.steps;
  return true;
}

StatusOr<bool> GradScaler::StepAll(
    std::initializer_list<torch::optim::Optimizer*> opts) {
  for (torch::optim::Optimizer* opt : opts) {
    if (per_opt_[opt].stage == Stage::kReady) {
      LOCKSTEP_RETURN_IF_ERROR(Unscale(*opt));
    }
  }
  bool all = true;
  for (torch::optim::Optimizer* opt : opts) {
    StatusOr<bool> stepped = Step(*opt);
    if (!stepped.ok()) return stepped.status();
    all = all && *stepped;
  }
  return all;
}

Status GradScaler::Update() {
  bool any_checked = false;
  bool found = false;
  std::set<FloatStatus*> read;
  for (auto& [opt, s] : per_opt_) {
    if (s.stage == Stage::kReady) continue;
    any_checked = true;
    found = found || s.found_inf;
    read.insert(s.status != nullptr ? s.status : options_.status);
    s.stage = Stage::kReady;
  }
  if (!any_checked) {
    return Misuse(
        "Update() without an Unscale() or Step() since the last "
        "Update(). Note: step an optimizer first");
  }
  state_.Update(found);
  if (UsesStatus(options_.check)) {
    for (FloatStatus* st : read) {
      if (st != nullptr) st->Clear();
    }
  }
  joint_decided_ = false;
  joint_found_inf_ = false;
  return state_.status();
}

const GradScaler::PerOptimizer* GradScaler::Find(
    const torch::optim::Optimizer& opt) const {
  auto it = per_opt_.find(&opt);
  return it == per_opt_.end() ? nullptr : &it->second;
}

bool GradScaler::found_inf(const torch::optim::Optimizer& opt) const {
  const PerOptimizer* s = Find(opt);
  return s != nullptr && s->found_inf;
}

bool GradScaler::found_inf_local(const torch::optim::Optimizer& opt) const {
  const PerOptimizer* s = Find(opt);
  return s != nullptr && s->found_inf_local;
}

int64_t GradScaler::steps(const torch::optim::Optimizer& opt) const {
  const PerOptimizer* s = Find(opt);
  return s == nullptr ? 0 : s->steps;
}

int64_t GradScaler::skipped(const torch::optim::Optimizer& opt) const {
  const PerOptimizer* s = Find(opt);
  return s == nullptr ? 0 : s->skipped;
}

}  // namespace lockstep
