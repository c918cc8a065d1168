// The statistics of a CUDA tensor in one pass on its device: max, min, the
// sum and the sum of squares, written as four doubles into a device buffer
// that the probe copies to the host once per step (TensorSummarizer::
// Resolve); and, in md5 mode, the CRC-32 of its bytes likewise. No host copy of
// the tensor, no host sync, no allocation: one kernel launch per tensor.
//
// Arithmetic: each element is widened to float (exact for float, half and
// bfloat16), max and min are taken in float, the sums accumulate in double
// (a float's square is exact in double), per thread in order, then in a
// fixed tree over the block and over the blocks (the last block to finish
// adds the blocks' totals in index order): the same tensor on the same GPU
// gives the same bits every time. A NaN makes max and min NaN (and the
// sums, by IEEE arithmetic), as torch's reductions do.
//
// Built only where LibTorch has CUDA and nvcc is found (CMake defines
// LOCKSTEP_CUDA_KERNELS); elsewhere DeviceStatsSupported is always false and
// the probe reduces with ATen operators on the device instead.
// Thread safety: the functions hold no state; call them from the thread that
// runs the tensor's stream work (the probe's callbacks).
#ifndef LOCKSTEP_SRC_TORCH_DEVICE_STATS_H_
#define LOCKSTEP_SRC_TORCH_DEVICE_STATS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace lockstep {

// Whether the kernels are to be used: this build has them, and
// LOCKSTEP_DEVICE_KERNELS is not 0 in the environment now (0: the ATen
// reductions instead, for comparing the two; the probe reads it at start).
bool DeviceKernelsWanted();

// Whether this build has the kernels and they handle `t`: a CUDA tensor of
// float, half or bfloat16 with at least one element.
bool DeviceStatsSupported(const at::Tensor& t);

// Queues the pass over `t` on t's device's current stream; the four doubles
// [max, min, sum, sum of squares] land at out[4 * index] .. out[4 * index +
// 3] when that stream gets there. REQUIRES: DeviceStatsSupported(t); `out`
// a contiguous double CUDA tensor on t's device with 4 * (index + 1)
// elements or more. Throws c10::Error when the launch fails.
void LaunchDeviceStats(const at::Tensor& t, const at::Tensor& out,
                       int64_t index);

// Tensors small enough to be summarized several to a launch, one block
// each: at most kSmallStatsElements elements (statistics) or kSmallCrcBytes
// bytes (CRC-32), dense; up to kSmallBatch of them a launch.
inline constexpr int64_t kSmallStatsElements = 16384;
inline constexpr int64_t kSmallCrcBytes = 65536;
inline constexpr int kSmallBatch = 64;

// One launch for up to kSmallBatch small dense tensors (DeviceStatsSupported,
// contiguous, at most kSmallStatsElements elements, all on the current
// device): tensor i's four doubles land at outs[i]. REQUIRES: outs[i] point
// into device buffers that outlive the launch. Throws c10::Error.
void LaunchSmallDeviceStats(const at::Tensor* tensors, double* const* outs,
                            int count);

// The same for CRC-32s (DeviceCrcSupported, contiguous, at most
// kSmallCrcBytes bytes): tensor i's CRC lands at outs[i].
void LaunchSmallDeviceCrcs(const at::Tensor* tensors, int32_t* const* outs,
                           int count);

// Whether this build has the CRC-32 kernel and it handles `t`: a CUDA
// tensor with storage and at least one element (any dtype: its bytes).
bool DeviceCrcSupported(const at::Tensor& t);

// Queues the CRC-32 (zlib's) of the bytes of t's dense row-major copy (the
// bytes a host copy of t holds) on t's device's current stream; it lands,
// as the int32 bit pattern, at out[index]. REQUIRES: DeviceCrcSupported(t);
// `out` a contiguous int32 CUDA tensor on t's device with more than `index`
// elements. Throws c10::Error when the launch fails.
void LaunchDeviceCrc(const at::Tensor& t, const at::Tensor& out, int64_t index);

// Waits for all work queued on `device` (a CUDA device), so that a buffer
// written by launches on several streams can be read. No-op without CUDA.
void DeviceStatsSynchronize(const c10::Device& device);

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_TORCH_DEVICE_STATS_H_
