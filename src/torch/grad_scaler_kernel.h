// The unscale-and-check pass of GradScaler: one read-modify-write pass over
// a gradient buffer that multiplies by 1/scale and notes whether any result
// is inf or NaN. No LibTorch here.
// Thread safety: pure functions on caller-owned buffers.
#ifndef LOCKSTEP_SRC_TORCH_GRAD_SCALER_KERNEL_H_
#define LOCKSTEP_SRC_TORCH_GRAD_SCALER_KERNEL_H_

#include <cstddef>

namespace lockstep::internal {

// p[i] *= inv for i in [0, n); returns true when any product is inf or NaN
// (so an inf or NaN input, or a finite one that overflows when inv > 1).
// REQUIRES: p valid for n elements (any alignment).
bool UnscaleAndCheck(float* p, size_t n, float inv);
bool UnscaleAndCheck(double* p, size_t n, double inv);

// The same loop without the multiply and the store: a plain read of the
// buffer that returns whether any element is inf or NaN. The benchmark's
// memory-read baseline.
bool AnyNonFinite(const float* p, size_t n);

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_TORCH_GRAD_SCALER_KERNEL_H_
