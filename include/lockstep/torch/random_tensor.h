// LibTorch tensors filled from lockstep's counter-based Philox streams:
// the same bits on every device, thread count and launch shape, unlike
// at::randn (whose CUDA stream depends on the launch grid, and which differs
// between CPU, CUDA and NPU for one seed).
//
// Element i (the C-order, i.e. row-major, index into `shape`) of the result
// is element `start + i` of stream (seed, offset) of the distribution, with
// the stream mapping and the exact uniform / normal / Bernoulli definitions
// of numerics/philox.h. So PhiloxNormal({2, 3}, s, o) and
// PhiloxNormal({6}, s, o) hold the same numbers, and
// `lockstep rng --seed S --offset O --count N --dist normal` prints them.
//
// The values are computed on the host (in parallel chunks with
// at::parallel_for; chunking cannot change them), converted there to the
// requested dtype (float32 values; kDouble widens exactly, kHalf and
// kBFloat16 round to nearest even on the host), and then copied to the
// requested device, so the device only ever receives finished bits. The
// copy to CUDA has not been run on a GPU yet (docs/repro.md).
//
// `options`: dtype and device are used (default dtype: float32 for uniform
// and normal, bool for masks; default device: CPU); layout must be strided.
// Thread safety: pure functions (they use LibTorch's thread pool).
#ifndef LOCKSTEP_TORCH_RANDOM_TENSOR_H_
#define LOCKSTEP_TORCH_RANDOM_TENSOR_H_

#include <ATen/core/Tensor.h>
#include <c10/core/TensorOptions.h>
#include <c10/util/ArrayRef.h>

#include <cstdint>

namespace lockstep {

// Which part of which stream fills a tensor.
struct PhiloxStreamRef {
  uint64_t seed = 0;    // e.g. DefaultPhiloxSeed() (torch/seed.h)
  uint64_t offset = 0;  // independent sub-stream, e.g. the step or layer
  uint64_t start = 0;   // index of the stream element for element 0
};

// Uniform on [0, 1): k * 2^-24 for k in [0, 2^24).
// REQUIRES: a floating-point dtype; start + numel <= 2^64.
at::Tensor PhiloxUniform(c10::IntArrayRef shape, const PhiloxStreamRef& s,
                         const c10::TensorOptions& options = {});

// Standard normal (mean 0, standard deviation 1), |value| < 6.8.
// REQUIRES: as PhiloxUniform.
at::Tensor PhiloxNormal(c10::IntArrayRef shape, const PhiloxStreamRef& s,
                        const c10::TensorOptions& options = {});

// Bernoulli mask: 1 with probability p (exactly floor(p * 2^32) / 2^32), else
// 0; p <= 0 or NaN gives all 0, p >= 1 all 1. Values 0/1 (false/true) in
// any dtype (default bool). A dropout keep-mask is PhiloxBernoulliMask(
// shape, 1 - p_drop, ...).
// REQUIRES: start + numel <= 2^64.
at::Tensor PhiloxBernoulliMask(c10::IntArrayRef shape, double p,
                               const PhiloxStreamRef& s,
                               const c10::TensorOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_RANDOM_TENSOR_H_
