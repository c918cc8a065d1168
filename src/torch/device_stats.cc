// device_stats.h where this build has no CUDA kernels (LibTorch without
// CUDA, or no nvcc): nothing is supported, and the probe reduces with ATen.
#include "torch/device_stats.h"

#ifndef LOCKSTEP_CUDA_KERNELS
#include <c10/util/Exception.h>

namespace lockstep {

bool DeviceKernelsWanted() { return false; }

bool DeviceStatsSupported(const at::Tensor&) { return false; }

void LaunchDeviceStats(const at::Tensor&, const at::Tensor&, int64_t) {
  TORCH_CHECK(false, "lockstep was built without its CUDA kernels");
}

bool DeviceCrcSupported(const at::Tensor&) { return false; }

void LaunchSmallDeviceStats(const at::Tensor*, double* const*, int) {
  TORCH_CHECK(false, "lockstep was built without its CUDA kernels");
}

void LaunchSmallDeviceCrcs(const at::Tensor*, int32_t* const*, int) {
  TORCH_CHECK(false, "lockstep was built without its CUDA kernels");
}

void LaunchDeviceCrc(const at::Tensor&, const at::Tensor&, int64_t) {
  TORCH_CHECK(false, "lockstep was built without its CUDA kernels");
}

void DeviceStatsSynchronize(const c10::Device&) {}

}  // namespace lockstep
#endif  // LOCKSTEP_CUDA_KERNELS
