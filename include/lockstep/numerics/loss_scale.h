// Loss scaling for mixed-precision training: the pure state machine that
// decides, step by step, the loss scale and whether the optimizer update is
// applied, with the exact rules of PyTorch, DeepSpeed, Megatron-LM and
// MindSpore. No LibTorch here; the torch layer feeds it `found_inf`.
//
// Thread safety: LossScaleOptions is a value. A LossScaleState is not
// synchronized; use one per training loop (or guard it externally).
//
// The rules, per LossScaleRule (s = scale, g = growth_factor,
// b = backoff_factor, N = growth_interval, H = hysteresis):
//
// kPyTorch (torch.amp.GradScaler.update / _amp_update_scale_):
//   inf:  s *= b; tracker = 0; step skipped.
//   good: tracker += 1; if tracker == N: tracker = 0 and s *= g, but only
//         if s * g is finite (else s is kept).
//   Off-by-one: the N-th consecutive good step grows (step 2000, not 1999).
//   PyTorch has no hysteresis: REQUIRES hysteresis == 1.
//
// kDeepSpeed (deepspeed/runtime/fp16/loss_scaler.py DynamicLossScaler.
//   update_scale; cur_iter starts at 0, last_overflow_iter at -1):
//   inf:  if H == 1 or hysteresis_left == 1: s = max(s * b, min_scale)
//         (if s == min_scale already and fail_on_overflow_at_min_scale: fail,
//         DeepSpeed's raise_error_at_min_scale); else hysteresis_left -= 1.
//         last_overflow_iter = cur_iter; step skipped.
//   good: if consecutive_hysteresis: hysteresis_left = H.
//         stable = cur_iter - last_overflow_iter - 1 (good steps before this
//         one since the last overflow); if stable > 0 and stable % N == 0:
//         hysteresis_left = H (when !consecutive_hysteresis); s *= g.
//   Always cur_iter += 1.
//   Off-by-one: growth on the (N+1)-th consecutive good step (stable == N),
//   not the N-th; then again every N good steps.
//
// kMegatron (megatron/core/optimizer/grad_scaler.py DynamicGradScaler):
//   inf:  tracker = 0; hysteresis_left -= 1 (may go below 0);
//         if hysteresis_left <= 0: s = max(s * b, min_scale). Step skipped.
//   good: tracker += 1; if tracker == N: tracker = 0, hysteresis_left = H,
//         s *= g. A good step does not refill hysteresis otherwise (unless
//         consecutive_hysteresis, which is a lockstep extension).
//   Off-by-one: the N-th consecutive good step grows; with H == 2 the first
//   overflow only uses up hysteresis, so 10 overflows from 2^32 give 2^23.
//
// kMindSpore (mindspore/train/loss_scale_manager.py DynamicLossScaleManager.
//   update_loss_scale; cur_iter starts at 1, last_overflow_iter at 0):
//   inf:  s = max(s * b, min_scale) (min_scale 1); last_overflow_iter =
//         cur_iter; step skipped. More than 1000 consecutive overflows
//         raise in MindSpore (preset: fail_after_consecutive_overflows 1001).
//   good: if (cur_iter - last_overflow_iter) % N == 0: s *= g.
//   Always cur_iter += 1.
//   Off-by-one: the N-th consecutive good step grows (as PyTorch), and
//   after an overflow at iteration j growth is at j + N.
//   MindSpore has no hysteresis: REQUIRES hysteresis == 1.
//
// Fixed (dynamic == false; MindSpore FixedLossScaleManager): s never
// changes; a step is skipped on inf only when drop_overflow_update.
//
// Bounds, for every rule: a backoff below min_scale gives min_scale; a growth
// above max_scale (or to inf) keeps the old scale. Both are counted and
// reported by last_event(); the scale never leaves [min_scale, max_scale] and
// is never 0, NaN or inf.
#ifndef LOCKSTEP_NUMERICS_LOSS_SCALE_H_
#define LOCKSTEP_NUMERICS_LOSS_SCALE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

enum class LossScaleRule { kPyTorch, kDeepSpeed, kMegatron, kMindSpore };

// "pytorch", "deepspeed", "megatron", "mindspore".
std::string_view LossScaleRuleName(LossScaleRule rule);

// The largest finite float32: the scale is a float32 tensor in PyTorch,
// DeepSpeed and Megatron, so it is the presets' max_scale.
inline constexpr double kMaxFloat32 = 3.4028234663852886e38;
// The smallest positive float32 (a subnormal): PyTorch's effective floor.
inline constexpr double kMinFloat32 = 1.401298464324817e-45;

struct LossScaleOptions {
  LossScaleRule rule = LossScaleRule::kPyTorch;
  double init_scale = 65536.0;     // > 0, finite, in [min_scale, max_scale]
  double growth_factor = 2.0;      // > 1, finite
  double backoff_factor = 0.5;     // in (0, 1)
  int64_t growth_interval = 2000;  // >= 1 (DeepSpeed/MindSpore scale_window)
  int64_t hysteresis = 1;          // >= 1 (DeepSpeed delayed_shift)
  bool consecutive_hysteresis = false;  // refill hysteresis on a good step
  double min_scale = kMinFloat32;       // > 0, finite
  double max_scale = kMaxFloat32;       // >= min_scale, finite
  // After this many consecutive overflows status() fails; 0 = never.
  int64_t fail_after_consecutive_overflows = 0;
  // kDeepSpeed: an overflow that would back off at min_scale fails.
  bool fail_on_overflow_at_min_scale = false;
  bool dynamic = true;  // false: a fixed scale (init_scale)
  // Fixed scale only: skip the step on overflow (true) or apply it anyway.
  bool drop_overflow_update = true;
};

// What the last Update() did to the scale.
enum class LossScaleEvent {
  kNone,        // unchanged
  kGrew,        // multiplied by growth_factor
  kBackedOff,   // multiplied by backoff_factor
  kHysteresis,  // overflow absorbed by hysteresis; scale unchanged
  kHeldAtMin,   // backoff would go below min_scale: set to min_scale
  kHeldAtMax,   // growth would exceed max_scale or overflow: kept
  kFailed,      // a failure condition was reached (see status())
};

// A loss-scale state machine: one Update() per optimizer step.
// Thread safety: not synchronized (see the file comment).
class LossScaleState {
 public:
  // REQUIRES: Validate(options).ok() (checked: aborts otherwise).
  explicit LossScaleState(LossScaleOptions options);

  // Options for a framework's defaults: "pytorch", "mindspore",
  // "mindspore-fixed", "deepspeed", "megatron". Unknown name:
  // InvalidArgument listing the known ones.
  static StatusOr<LossScaleOptions> Preset(std::string_view name);
  static std::vector<std::string_view> PresetNames();

  // OK, or InvalidArgument naming the first bad option and its value, e.g.
  // "backoff_factor 1.5: must be in (0, 1)".
  static Status Validate(const LossScaleOptions& options);

  // Records one step's overflow check and advances the scale by the rule.
  // Returns whether this step's optimizer update is applied (false: skip).
  bool Update(bool found_inf);

  double scale() const { return scale_; }
  const LossScaleOptions& options() const { return options_; }
  // Good steps since the last overflow or growth (PyTorch/Megatron's
  // _growth_tracker).
  int64_t growth_tracker() const { return growth_tracker_; }
  // DeepSpeed cur_hysteresis / Megatron _hysteresis_tracker (Megatron's
  // may be <= 0).
  int64_t hysteresis_left() const { return hysteresis_left_; }
  int64_t consecutive_overflows() const { return consecutive_overflows_; }
  int64_t total_skipped() const { return total_skipped_; }
  int64_t iterations() const { return iter_; }
  LossScaleEvent last_event() const { return last_event_; }
  int64_t times_held_at_min() const { return held_at_min_; }
  int64_t times_held_at_max() const { return held_at_max_; }

  // OK until a failure condition is reached (fail_after_consecutive_
  // overflows, fail_on_overflow_at_min_scale); then InvalidArgument saying
  // which, from then on. Update() keeps working after a failure.
  Status status() const { return status_; }

  // The state (options included) as text, for checkpoints: a first line
  // "lockstep-loss-scale 1", then one "key value" line per field; doubles in
  // C99 hex-float form so they round-trip exactly. status() is not saved.
  std::string SaveState() const;
  // Restores a state saved by SaveState(). Errors: NotSupported for another
  // format version ("version 2; this build reads 1"), Corruption naming the
  // line or key for anything malformed, missing, duplicated or out of range
  // (the options must validate and the scale lie in [min_scale, max_scale]).
  static StatusOr<LossScaleState> LoadState(std::string_view text);

 private:
  void UpdatePyTorch(bool found_inf);
  void UpdateDeepSpeed(bool found_inf);
  void UpdateMegatron(bool found_inf);
  void UpdateMindSpore(bool found_inf);
  void BackOff();  // s *= b, held at min_scale
  void Grow();     // s *= g, held below max_scale
  void Fail(std::string_view problem);

  LossScaleOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t hysteresis_left_;
  int64_t consecutive_overflows_ = 0;
  int64_t total_skipped_ = 0;
  int64_t iter_ = 0;                 // Update() calls so far
  int64_t last_overflow_iter_ = -1;  // iter_ of the last overflow
  LossScaleEvent last_event_ = LossScaleEvent::kNone;
  int64_t held_at_min_ = 0;
  int64_t held_at_max_ = 0;
  Status status_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_LOSS_SCALE_H_
