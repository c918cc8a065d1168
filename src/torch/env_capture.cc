#include "lockstep/torch/env_capture.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/cuda.h>
#include <torch/nn/module.h>
#include <torch/version.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <thread>
#include <type_traits>

#include "lockstep/core/file.h"
#include "lockstep/format/crc32.h"
#include "torch/host_info.h"

namespace lockstep {
namespace {

using Value = std::optional<std::string>;

std::string Bool(bool b) { return b ? "true" : "false"; }

template <typename T>
Value Opt(const std::optional<T>& v) {
  if (!v) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    return *v;
  } else {
    return std::to_string(*v);
  }
}

// The text after "key=" in show_config's "Build settings" line, up to ','.
Value ConfigSetting(const std::string& config, const std::string& key) {
  for (const char* before : {" ", ","}) {
    size_t p = config.find(before + key + "=");
    if (p == std::string::npos) continue;
    p += key.size() + 2;
    size_t end = config.find_first_of(",\n", p);
    return config.substr(p, end == std::string::npos ? end : end - p);
  }
  return std::nullopt;
}

// The rest of the show_config line that starts with "  - " + `prefix`.
Value ConfigLine(const std::string& config, const std::string& prefix) {
  size_t p = config.find("  - " + prefix);
  if (p == std::string::npos) return std::nullopt;
  p += 4 + prefix.size();
  return config.substr(p, config.find('\n', p) - p);
}

// The first "  - " line: the compiler LibTorch was built with.
Value ConfigCompiler(const std::string& config) {
  return ConfigLine(config, "");
}

const char* MatmulPrecisionName(at::Float32MatmulPrecision p) {
  switch (p) {
    case at::Float32MatmulPrecision::HIGHEST:
      return "highest";
    case at::Float32MatmulPrecision::HIGH:
      return "high";
    case at::Float32MatmulPrecision::MEDIUM:
      return "medium";
  }
  return "unknown";
}

// Whether cuBLAS may reduce fp16 GEMMs in reduced precision: LibTorch 1.x
// answers a bool, 2.x a CuBLASReductionOption (which also says whether
// split-K is allowed; only its first value allows the reduced precision).
template <typename T>
bool Fp16ReductionAllowed(T option) {
  if constexpr (std::is_same_v<T, bool>) {
    return option;
  } else {
    return option == T::AllowReducedPrecisionWithSplitK;
  }
}

// A LibTorch setting as `get` reads it, or nullopt where LibTorch refuses
// to say: 2.9+ throws from its older TF32 getters (allowTF32CuBLAS,
// allowTF32CuDNN) once the newer fp32_precision switches hold a state they
// cannot express, which must not stop a capture (or a probe's start).
template <typename F>
Value Setting(F&& get) {
  try {
    return get();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void AddSeeds(const EnvCaptureOptions& o, EnvFingerprint* fp) {
  at::Generator gen = at::globalContext().defaultGenerator(at::kCPU);
  fp->Set("seed", "torch_cpu", std::to_string(gen.current_seed()));
  fp->Set("seed", "philox", std::to_string(DefaultPhiloxSeed()));
  std::optional<SeedRecord> last = LastSeedRecord();
  const SeedRecord* r = o.seeds ? o.seeds : (last ? &*last : nullptr);
  if (r != nullptr) AddSeedRecord(*r, fp);
}

void AddFlags(EnvFingerprint* fp) {
  at::Context& c = at::globalContext();
  fp->Set("determinism", "deterministic_algorithms",
          Bool(c.deterministicAlgorithms()));
  fp->Set("determinism", "deterministic_warn_only",
          Bool(c.deterministicAlgorithmsWarnOnly()));
  fp->Set("determinism", "cudnn_deterministic", Bool(c.deterministicCuDNN()));
  fp->Set("determinism", "cudnn_benchmark", Bool(c.benchmarkCuDNN()));
  fp->Set("determinism", "cudnn_enabled", Bool(c.userEnabledCuDNN()));
  fp->Set("precision", "allow_tf32_cublas",
          Setting([&]() -> Value { return Bool(c.allowTF32CuBLAS()); }));
  fp->Set("precision", "allow_tf32_cudnn",
          Setting([&]() -> Value { return Bool(c.allowTF32CuDNN()); }));
  fp->Set("precision", "float32_matmul_precision", Setting([&]() -> Value {
            return MatmulPrecisionName(c.float32MatmulPrecision());
          }));
  fp->Set("precision", "allow_fp16_reduction_cublas", Setting([&]() -> Value {
            return Bool(Fp16ReductionAllowed(c.allowFP16ReductionCuBLAS()));
          }));
  fp->Set("precision", "denormals", host::DenormalFlags());
}

void AddEnvVars(EnvFingerprint* fp) {
  for (std::string_view name : NumericsEnvVars()) {
    const char* v = std::getenv(std::string(name).c_str());
    fp->Set("env", name, v ? Value(v) : std::nullopt);
  }
}

// LibTorch's version and build, devices, BLAS.
void AddBuild(const std::string& config, EnvFingerprint* fp) {
  Value version = ConfigSetting(config, "TORCH_VERSION");
  fp->Set("libtorch", "version", version ? version : Value(TORCH_VERSION));
  fp->Set("libtorch", "cuda_build", ConfigSetting(config, "USE_CUDA"));
  fp->Set("libtorch", "build_config", config);
  fp->Set("device", "cuda_available", Bool(at::globalContext().hasCUDA()));
  fp->Set("device", "cuda_devices",
          std::to_string(static_cast<int64_t>(torch::cuda::device_count())));
  fp->Set("device", "cudnn_available", Bool(at::globalContext().hasCuDNN()));
  fp->Set("blas", "build", ConfigSetting(config, "BLAS_INFO"));
  fp->Set("blas", "lapack", ConfigSetting(config, "LAPACK_INFO"));
  fp->Set("blas", "loaded", host::LoadedBlasLibraries());
  fp->Set("blas", "openblas_config", host::OpenBlasConfig());
}

// CPU, threads, compilers, OS and host.
void AddMachine(const std::string& config, EnvFingerprint* fp) {
  fp->Set("cpu", "aten_capability",
          ConfigLine(config, "CPU capability usage: "));
  fp->Set("cpu", "features", host::CpuFeatures());
  fp->Set("cpu", "model", host::CpuModel());
  fp->Set("threads", "intra_op", std::to_string(at::get_num_threads()));
  fp->Set("threads", "inter_op", std::to_string(at::get_num_interop_threads()));
  fp->Set("threads", "openblas", Opt(host::OpenBlasThreads()));
  fp->Set("threads", "hardware",
          std::to_string(std::thread::hardware_concurrency()));
  fp->Set("compiler", "lockstep", host::ThisCompiler());
  fp->Set("compiler", "libtorch", ConfigCompiler(config));
  fp->Set("os", "kernel", host::Kernel());
  fp->Set("os", "libc", host::Libc());
  fp->Set("host", "hostname", host::Hostname());
  fp->Set("host", "captured_at", host::UtcNow());
}

EnvFingerprint Capture(const EnvCaptureOptions& o) {
  EnvFingerprint fp;
  AddSeeds(o, &fp);
  AddFlags(&fp);
  for (const auto& [name, value] : o.run) fp.Set("run", name, value);
  AddEnvVars(&fp);
  std::string config = at::show_config();
  AddBuild(config, &fp);
  AddMachine(config, &fp);
  if (o.model != nullptr) {
    for (const auto& item : o.model->named_parameters(/*recurse=*/true)) {
      fp.parameters.push_back(TensorChecksum(item.key(), item.value()));
    }
  }
  for (const auto& [name, t] : o.data) {
    fp.data.push_back(TensorChecksum(name, t));
  }
  return fp;
}

}  // namespace

const std::vector<std::string_view>& NumericsEnvVars() {
  static const std::vector<std::string_view> kVars = {
      "OMP_NUM_THREADS",
      "MKL_NUM_THREADS",
      "OPENBLAS_NUM_THREADS",
      "OMP_DYNAMIC",
      "MKL_CBWR",
      "MKL_ENABLE_INSTRUCTIONS",
      "ATEN_CPU_CAPABILITY",
      "DNNL_MAX_CPU_ISA",
      "ONEDNN_MAX_CPU_ISA",
      "OPENBLAS_CORETYPE",
      "LOCKSTEP_CPU_LEVEL",  // the probe's own statistics and CRC kernels
      "CUBLAS_WORKSPACE_CONFIG",
      "NVIDIA_TF32_OVERRIDE",
      "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
      "CUDA_VISIBLE_DEVICES",
      "CUDA_LAUNCH_BLOCKING",
      "NCCL_ALGO",
      "NCCL_PROTO",
      "HCCL_DETERMINISTIC",
      "INF_NAN_MODE_ENABLE",
      "ASCEND_LAUNCH_BLOCKING",
      "PYTHONHASHSEED",
  };
  return kVars;
}

EnvChecksum TensorChecksum(std::string name, const at::Tensor& t) {
  EnvChecksum c;
  c.name = std::move(name);
  if (!t.defined()) {
    c.dtype = "undefined";
    return c;
  }
  c.dtype = c10::toString(t.scalar_type());
  c.shape.assign(t.sizes().begin(), t.sizes().end());
  at::Tensor host = t.detach().to(at::kCPU).contiguous();
  c.crc32c = Crc32c(std::string_view(static_cast<const char*>(host.data_ptr()),
                                     host.nbytes()));
  return c;
}

StatusOr<EnvFingerprint> CaptureEnvFingerprint(
    const EnvCaptureOptions& options) {
  try {
    return Capture(options);
  } catch (const std::exception& e) {
    return Status::Internal("environment capture", e.what());
  }
}

Status WriteEnvFingerprint(const std::string& dir,
                           const EnvCaptureOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(EnvFingerprint fp, CaptureEnvFingerprint(options));
  LOCKSTEP_RETURN_IF_ERROR(CreateDirs(dir));
  return WriteEnvFingerprintFile(
      (std::filesystem::path(dir) / kEnvFileName).string(), fp);
}

}  // namespace lockstep
