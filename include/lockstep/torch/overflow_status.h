// Overflow detection backends for mixed-precision training, and an fp16
// emulation that reproduces a device's overflow behaviour on the CPU.
//
// Two ways to learn that a step overflowed:
//  - the value check: look for inf/NaN in the gradients (PyTorch's way).
//    It only works when overflow produces inf/NaN (IEEE "inf/nan mode").
//  - the status check: a sticky flag that the device sets whenever an fp16
//    result overflows (an NPU's float status register). In "saturation
//    mode" an NPU writes +-65504 instead of +-inf and 0 instead of NaN, so
//    the values look finite and only the status tells.
//
// FloatStatus is that sticky flag; Fp16Emulator rounds tensors (and, in
// autograd, their gradients) through fp16 in either mode and raises the
// flag. One FloatStatus shared by several losses or optimizers is one
// hardware status: an overflow in any of them is seen by all of them.
//
// Thread safety: FloatStatus is safe to Set/Test/Clear from any thread.
// Fp16Emulator is immutable after construction except set_status(), which
// must not race with Apply().
#ifndef LOCKSTEP_TORCH_OVERFLOW_STATUS_H_
#define LOCKSTEP_TORCH_OVERFLOW_STATUS_H_

#include <ATen/core/Tensor.h>

#include <atomic>

namespace lockstep {

// A sticky overflow flag, like an NPU's float status register: Set() by
// any overflowing fp16 result, read by Test(), reset only by Clear().
class FloatStatus {
 public:
  FloatStatus() = default;
  FloatStatus(const FloatStatus&) = delete;
  FloatStatus& operator=(const FloatStatus&) = delete;

  void Set() { flag_.store(true, std::memory_order_relaxed); }
  bool Test() const { return flag_.load(std::memory_order_relaxed); }
  void Clear() { flag_.store(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> flag_{false};
};

// What an fp16 result that does not fit becomes.
enum class Fp16OverflowMode {
  kInfNan,      // IEEE: |x| >= 65520 rounds to +-inf, NaN stays NaN
  kSaturation,  // NPU saturation mode: +-inf becomes +-65504, NaN becomes 0
};

// "inf-nan" / "saturation".
const char* Fp16OverflowModeName(Fp16OverflowMode mode);

// Rounds each element of `x` to the nearest fp16 value (ties to even) and
// returns it in x's dtype; in kSaturation mode results that round to +-inf
// (or are inf) become +-65504 and NaN becomes 0. If `status` is not null it
// is Set() when any result rounded to inf or was NaN/inf (in both modes,
// before saturation). -0 stays -0; subnormal fp16 results are kept.
// REQUIRES: x is a floating-point tensor (float32, float64, fp16, bf16).
// Costs a host synchronisation when `status` is not null.
at::Tensor RoundToFp16(const at::Tensor& x, Fp16OverflowMode mode,
                       FloatStatus* status);

// Emulates fp16 storage inside a float32 computation: Apply(x) is
// RoundToFp16(x) in the forward pass, and in the backward pass it rounds
// the incoming gradient the same way (an fp16 gradient), raising the status
// it was created with. Use it on layer outputs (activations) and on the
// weights a layer reads (the fp16 copy of an fp32 master weight, whose
// gradient is then an fp16 gradient).
class Fp16Emulator {
 public:
  // `status` may be null (no flag); not owned, and must outlive every
  // backward pass through tensors returned by Apply().
  Fp16Emulator(Fp16OverflowMode mode, FloatStatus* status)
      : mode_(mode), status_(status) {}

  // Differentiable: gradients flow to `x` rounded as described above.
  at::Tensor Apply(const at::Tensor& x) const;

  Fp16OverflowMode mode() const { return mode_; }
  FloatStatus* status() const { return status_; }
  // Later Apply() calls (and their backward passes) raise `status`.
  void set_status(FloatStatus* status) { status_ = status; }

 private:
  Fp16OverflowMode mode_;
  FloatStatus* status_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_OVERFLOW_STATUS_H_
