#include "lockstep/torch/seed.h"

#include <ATen/Context.h>
#include <torch/cuda.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace lockstep {
namespace {

constexpr char kCublasWorkspaceVar[] = "CUBLAS_WORKSPACE_CONFIG";
// The cuBLAS setting NVIDIA documents for bitwise reproducibility.
constexpr char kCublasWorkspaceValue[] = ":4096:8";

std::atomic<uint64_t> g_philox_seed{kUnseededPhiloxSeed};
std::mutex g_record_mu;
std::optional<SeedRecord> g_last_record;  // guarded by g_record_mu

void SeedGenerator(const at::Generator& const_gen, uint64_t seed) {
  at::Generator gen = const_gen;  // shares the generator's implementation
  // See LibTorch's Note [Acquire lock when using random generators].
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_current_seed(seed);
}

// Seeds every CUDA device's default generator; returns how many.
// torch::cuda::device_count() is 0 on CPU-only builds and without GPUs, so
// no CUDA call is made there (seeding a CUDA build without GPUs would fail).
int64_t SeedCudaGenerators(uint64_t seed) {
  if (!at::globalContext().hasCUDA()) return 0;
  int64_t n = static_cast<int64_t>(torch::cuda::device_count());
  for (int64_t i = 0; i < n; ++i) {
    SeedGenerator(at::globalContext().defaultGenerator(
                      at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(i))),
                  seed);
  }
  return n;
}

std::optional<std::string> GetEnv(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

void SetFlags(bool deterministic, SeedRecord* r) {
  at::Context& ctx = at::globalContext();
  ctx.setDeterministicAlgorithms(deterministic, /*warn_only=*/false);
  ctx.setDeterministicCuDNN(deterministic);
  if (deterministic) {
    ctx.setBenchmarkCuDNN(false);
    if (!GetEnv(kCublasWorkspaceVar)) {
      setenv(kCublasWorkspaceVar, kCublasWorkspaceValue, /*overwrite=*/0);
      r->cublas_workspace_config_set = true;
    }
  }
  r->deterministic_algorithms = ctx.deterministicAlgorithms();
  r->cudnn_deterministic = ctx.deterministicCuDNN();
  r->cudnn_benchmark = ctx.benchmarkCuDNN();
  r->cublas_workspace_config = GetEnv(kCublasWorkspaceVar);
}

std::string Bool(bool b) { return b ? "true" : "false"; }

}  // namespace

SeedRecord SeedAll(uint64_t seed, bool deterministic) {
  SeedRecord r;
  r.seed = seed;
  r.deterministic = deterministic;
  SeedGenerator(at::globalContext().defaultGenerator(at::kCPU), seed);
  r.cuda_generators_seeded = SeedCudaGenerators(seed);
  SetDefaultPhiloxSeed(seed);
  r.philox_seed = DefaultPhiloxSeed();
  SetFlags(deterministic, &r);
  std::lock_guard<std::mutex> lock(g_record_mu);
  g_last_record = r;
  return r;
}

std::optional<SeedRecord> LastSeedRecord() {
  std::lock_guard<std::mutex> lock(g_record_mu);
  return g_last_record;
}

uint64_t DefaultPhiloxSeed() { return g_philox_seed.load(); }

void SetDefaultPhiloxSeed(uint64_t seed) { g_philox_seed.store(seed); }

void AddSeedRecord(const SeedRecord& r, EnvFingerprint* fp) {
  fp->Set("seed", "seed", std::to_string(r.seed));
  fp->Set("seed", "deterministic", Bool(r.deterministic));
  fp->Set("seed", "philox", std::to_string(r.philox_seed));
  fp->Set("seed", "cuda_generators", std::to_string(r.cuda_generators_seeded));
  fp->Set("seed", "cublas_workspace_config_set",
          Bool(r.cublas_workspace_config_set));
}

}  // namespace lockstep
