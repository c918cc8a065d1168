// Capturing the environment fingerprint (format/env_fingerprint.h) of the
// running process: what its numbers may depend on besides the code.
//
// Sections and fields written (values are text; null = unset/unknown):
//   seed         torch_cpu (the CPU generator's current seed), philox
//                (DefaultPhiloxSeed()), and SeedAll's record when there is
//                one: seed, deterministic, cuda_generators,
//                cublas_workspace_config_set (torch/seed.h)
//   determinism  deterministic_algorithms, deterministic_warn_only,
//                cudnn_deterministic, cudnn_benchmark, cudnn_enabled
//                (LibTorch's state at capture time)
//   precision    allow_tf32_cublas, allow_tf32_cudnn,
//                float32_matmul_precision (highest|high|medium),
//                allow_fp16_reduction_cublas, denormals (x86 MXCSR FTZ/DAZ)
//   run          the caller's own settings (EnvCaptureOptions::run)
//   env          each of NumericsEnvVars(), or null when unset
//   libtorch     version, cuda_build, build_config (at::show_config())
//   device       cuda_available, cuda_devices, cudnn_available
//   blas         build (BLAS_INFO), lapack (LAPACK_INFO), loaded (library
//                files mapped into the process), openblas_config
//   cpu          aten_capability (the vector ISA ATen's kernels use),
//                features, model
//   threads      intra_op (at::get_num_threads), inter_op
//                (at::get_num_interop_threads), openblas, hardware
//   compiler     lockstep (this build's compiler), libtorch (from
//                show_config)
//   os           kernel, libc
//   host         hostname, captured_at (UTC)
// plus CRC-32C checksums of the model's parameters (named_parameters order)
// and of the data tensors given. compare/env_diff.h ranks differences.
//
// Thread safety: capture reads process-wide state; call it while no other
// thread changes LibTorch's settings or the environment.
#ifndef LOCKSTEP_TORCH_ENV_CAPTURE_H_
#define LOCKSTEP_TORCH_ENV_CAPTURE_H_

#include <ATen/core/Tensor.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/env_fingerprint.h"
#include "lockstep/torch/seed.h"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace lockstep {

struct EnvCaptureOptions {
  // The seeding to record; when null, LastSeedRecord() if SeedAll ran.
  const SeedRecord* seeds = nullptr;
  // Whose parameters to checksum (none when null). Not owned.
  const torch::nn::Module* model = nullptr;
  // Named data tensors to checksum (e.g. the first batch), in this order.
  std::vector<std::pair<std::string, at::Tensor>> data;
  // The caller's settings that change numbers (dtype, amp, ...), recorded as
  // section "run", e.g. {"dtype", "bf16"}. REQUIRES: names non-empty.
  std::vector<std::pair<std::string, std::string>> run;
};

// The environment variables recorded as section "env": thread counts
// (OMP/MKL/OpenBLAS), ISA overrides (ATEN_CPU_CAPABILITY, MKL_CBWR, oneDNN,
// OpenBLAS core type), CUDA/cuBLAS/NCCL settings (CUBLAS_WORKSPACE_CONFIG,
// NVIDIA_TF32_OVERRIDE, ...), Ascend HCCL_DETERMINISTIC and
// INF_NAN_MODE_ENABLE, PYTHONHASHSEED.
const std::vector<std::string_view>& NumericsEnvVars();

// CRC-32C of `t`'s elements in C order, copied to the host if needed; dtype
// is LibTorch's name ("Float"). An undefined tensor gives dtype "undefined",
// shape [] and crc 0.
EnvChecksum TensorChecksum(std::string name, const at::Tensor& t);

// The fingerprint of this process now (see the top of this file).
// Errors: Internal when LibTorch throws (e.g. a parameter on a device that
// cannot be read).
StatusOr<EnvFingerprint> CaptureEnvFingerprint(
    const EnvCaptureOptions& options = {});

// Captures and writes `dir`/env.json atomically, creating `dir` if needed.
// The probe calls it for its dump root when it starts.
// Errors: those of CaptureEnvFingerprint, CreateDirs and WriteFileAtomic.
Status WriteEnvFingerprint(const std::string& dir,
                           const EnvCaptureOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_ENV_CAPTURE_H_
