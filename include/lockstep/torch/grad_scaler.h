// GradScaler: loss scaling for torch::optim optimizers (LibTorch has no
// C++ GradScaler). It adapts lockstep::LossScaleState (numerics/
// loss_scale.h: the PyTorch, DeepSpeed, Megatron and MindSpore rules) to
// tensors and optimizers, with PyTorch's per-optimizer protocol:
//
//   at::Tensor loss = ...;
//   scaler.Scale(loss).backward();
//   RETURN_IF_ERROR(scaler.Unscale(opt));   // optional: before clipping
//   torch::nn::utils::clip_grad_norm_(params, 1.0);
//   ASSIGN_OR_RETURN(bool stepped, scaler.Step(opt));  // skips on overflow
//   RETURN_IF_ERROR(scaler.Update());       // once per iteration
//
// Unscale() is one fused pass per gradient: multiply by 1/scale and check
// for inf/NaN (contiguous CPU float32/float64 gradients; other gradients go
// through ATen ops with one host synchronisation per Unscale, not per
// tensor). Each optimizer is unscaled at most once per iteration and
// before its Step(), as in PyTorch; breaking that order is an error Status
// (FailedPrecondition-like, code InvalidArgument), never an exception.
// LibTorch exceptions raised inside (optimizer.step()) come back as Status.
//
// Several optimizers (a GAN's generator and discriminator):
//  - StepMode::kPerOptimizer (PyTorch): each optimizer skips on its own
//    overflow; Update() backs off if any optimizer overflowed.
//  - StepMode::kJoint: one overflow decision for all optimizers unscaled
//    in the iteration: all step or none. Unscale every optimizer (or use
//    StepAll) before the first Step().
//
// Overflow checks (OverflowCheck): the gradient values (inf/NaN), a
// FloatStatus flag (overflow_status.h; what an NPU in saturation mode
// needs), or both. Statuses are read by Unscale() and cleared by Update().
//
// Data parallel: with an OverflowAgreement the found-inf flag of each
// Unscale() is all-reduced (MAX) over the ranks before any skip decision,
// so every rank makes the same decision.
//
// Thread safety: not synchronized; one training loop per GradScaler.
#ifndef LOCKSTEP_TORCH_GRAD_SCALER_H_
#define LOCKSTEP_TORCH_GRAD_SCALER_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/numerics/loss_scale.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace lockstep {

class FloatStatus;
class OverflowAgreement;

enum class OverflowCheck { kValue, kStatus, kValueAndStatus };
enum class StepMode { kPerOptimizer, kJoint };

// "value", "status", "value+status"; "per-optimizer", "joint".
const char* OverflowCheckName(OverflowCheck c);
const char* StepModeName(StepMode m);

struct GradScalerOptions {
  LossScaleOptions loss_scale;  // validated by GradScaler::Create
  OverflowCheck check = OverflowCheck::kValue;
  StepMode mode = StepMode::kPerOptimizer;
  // The status read by kStatus checks for optimizers without their own
  // (SetStatus). Not owned; must outlive the scaler's use.
  FloatStatus* status = nullptr;
  // Ranks agree through this; nullptr: a single process. Not owned.
  OverflowAgreement* agreement = nullptr;
  // Threads for the unscale pass (large gradients only); 0: LibTorch's
  // at::get_num_threads().
  int threads = 0;
};

// Loss-scale options from a command-line spec:
//   "fixed:S"         a fixed scale S (finite, > 0), overflowing steps
//                     skipped (MindSpore FixedLossScaleManager with
//                     drop_overflow_update)
//   "dynamic"         the "pytorch" preset
//   "dynamic:PRESET"  LossScaleState::Preset(PRESET)
// Errors: InvalidArgument naming the spec and the accepted forms.
StatusOr<LossScaleOptions> ParseLossScaleSpec(std::string_view spec);

class GradScaler {
 public:
  // Errors: InvalidArgument for invalid loss-scale options
  // (LossScaleState::Validate), threads < 0.
  static StatusOr<GradScaler> Create(GradScalerOptions options);
  // Create() with options.loss_scale = ParseLossScaleSpec(spec).
  static StatusOr<GradScaler> FromSpec(std::string_view spec,
                                       GradScalerOptions options = {});

  // loss * scale() (a new tensor; differentiable).
  at::Tensor Scale(const at::Tensor& loss) const;

  // Divides the gradients of all of `opt`'s parameter groups by scale()
  // and records whether this optimizer overflowed (agreed across ranks).
  // Parameters without a gradient are skipped. Errors (InvalidArgument):
  // called twice for `opt` since the last Update(), after Step(opt), in
  // joint mode after the joint decision, or a kStatus check without a
  // status; NotSupported for sparse gradients; IoError if agreement fails.
  Status Unscale(torch::optim::Optimizer& opt);

  // Unscales `opt` if not yet done, then calls opt.step() unless the step
  // must be skipped. Returns whether it stepped. Errors: as Unscale, Step
  // twice for `opt` since the last Update(), and the optimizer's own error.
  StatusOr<bool> Step(torch::optim::Optimizer& opt);
  // Unscales the optimizers not yet unscaled, then steps each (in joint
  // mode: all or none). Returns whether they stepped (all of them: in
  // per-optimizer mode, whether none skipped).
  StatusOr<bool> StepAll(std::initializer_list<torch::optim::Optimizer*> opts);

  // Feeds the iteration's overflow (any optimizer's) to the state machine,
  // clears the statuses read, and starts the next iteration. Errors:
  // InvalidArgument if no optimizer was unscaled since the last Update();
  // the state machine's failure (LossScaleState::status()) once reached.
  Status Update();

  // The status that kStatus checks read for `opt` (instead of
  // options.status). Not owned.
  void SetStatus(const torch::optim::Optimizer& opt, FloatStatus* status);

  double scale() const { return state_.scale(); }
  const LossScaleState& state() const { return state_; }
  const GradScalerOptions& options() const { return options_; }
  // This iteration's verdict for `opt` after Unscale: agreed over ranks,
  // and this rank's own check alone.
  bool found_inf(const torch::optim::Optimizer& opt) const;
  bool found_inf_local(const torch::optim::Optimizer& opt) const;
  // Steps of `opt` applied and skipped since this scaler was created.
  int64_t steps(const torch::optim::Optimizer& opt) const;
  int64_t skipped(const torch::optim::Optimizer& opt) const;

  // The scaler's state for a checkpoint: "lockstep-grad-scaler 1", the
  // check and mode, then LossScaleState::SaveState() (options included).
  std::string StateDict() const;
  // Restores StateDict() output. Errors: NotSupported for another version;
  // Corruption for malformed text (naming the line); InvalidArgument when
  // the check or mode differ from this scaler's, or an iteration is in
  // progress (some optimizer unscaled since the last Update()).
  Status LoadStateDict(std::string_view text);

 private:
  enum class Stage { kReady, kUnscaled, kStepped };
  struct PerOptimizer {
    Stage stage = Stage::kReady;
    bool found_inf = false;        // agreed over ranks
    bool found_inf_local = false;  // this rank's check
    FloatStatus* status = nullptr;
    int64_t steps = 0;
    int64_t skipped = 0;
  };

  GradScaler(GradScalerOptions options, LossScaleState state);
  StatusOr<bool> CheckAndUnscale(torch::optim::Optimizer& opt);
  bool SkipStep(const PerOptimizer& s) const;
  bool JointFoundInf() const;
  const PerOptimizer* Find(const torch::optim::Optimizer& opt) const;

  GradScalerOptions options_;
  LossScaleState state_;
  std::unordered_map<const torch::optim::Optimizer*, PerOptimizer> per_opt_;
  bool joint_decided_ = false;
  bool joint_found_inf_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_GRAD_SCALER_H_
