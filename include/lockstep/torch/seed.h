// SeedAll: one call that makes a LibTorch run repeat itself — every random
// generator seeded, deterministic algorithms on — and a record of exactly
// what it set, for the environment fingerprint (torch/env_capture.h).
//
// What SeedAll(seed, deterministic) does, in order:
//   1. seeds LibTorch's default CPU generator with `seed` (as
//      torch.manual_seed does: the generator's state restarts);
//   2. seeds the default generator of every visible CUDA device with `seed`
//      (none on a CPU-only build, or a CUDA build without GPUs);
//   3. sets lockstep's default Philox seed (DefaultPhiloxSeed() below, used
//      by lockstep's own random tensors, torch/random_tensor.h) to `seed`;
//   4. deterministic == true: at::globalContext().setDeterministicAlgorithms
//      (true, warn_only=false), cuDNN deterministic on, cuDNN benchmark off,
//      and CUBLAS_WORKSPACE_CONFIG=":4096:8" in the process environment when
//      it was unset (cuBLAS needs it for reproducible results on CUDA >= 10.2,
//      and LibTorch refuses some CUDA ops in deterministic mode without it;
//      it is read when cuBLAS starts, so call SeedAll before any CUDA work).
//      deterministic == false: deterministic algorithms off and cuDNN
//      deterministic off; cuDNN benchmark and the environment are left as
//      they are.
// TF32 and matmul-precision settings are precision choices, not sources of
// run-to-run variation, and are left alone (the fingerprint records them).
//
// The CUDA parts compile against CPU-only LibTorch 1.13 and CUDA builds of
// 2.x; they have not been run on a GPU yet (docs/repro.md).
// Thread safety: call SeedAll at the start of a run, before other threads
// draw random numbers or read the environment (it calls setenv).
// DefaultPhiloxSeed / SetDefaultPhiloxSeed / LastSeedRecord are thread-safe.
#ifndef LOCKSTEP_TORCH_SEED_H_
#define LOCKSTEP_TORCH_SEED_H_

#include <cstdint>
#include <optional>
#include <string>

#include "lockstep/format/env_fingerprint.h"

namespace lockstep {

// What SeedAll set, and the flags read back from LibTorch afterwards.
struct SeedRecord {
  uint64_t seed = 0;
  bool deterministic = false;             // as requested
  int64_t cuda_generators_seeded = 0;     // one per visible CUDA device
  uint64_t philox_seed = 0;               // DefaultPhiloxSeed() afterwards
  bool deterministic_algorithms = false;  // read back
  bool cudnn_deterministic = false;       // read back
  bool cudnn_benchmark = false;           // read back
  // CUBLAS_WORKSPACE_CONFIG afterwards (nullopt: unset), and whether SeedAll
  // set it.
  std::optional<std::string> cublas_workspace_config;
  bool cublas_workspace_config_set = false;

  bool operator==(const SeedRecord&) const = default;
};

// See the top of this file. Returns what was set; also kept for
// LastSeedRecord().
SeedRecord SeedAll(uint64_t seed, bool deterministic);

// The record of the latest SeedAll call in this process, if any.
std::optional<SeedRecord> LastSeedRecord();

// The seed lockstep's own generators use when the caller gives none:
// kUnseededPhiloxSeed until SeedAll or SetDefaultPhiloxSeed sets it.
inline constexpr uint64_t kUnseededPhiloxSeed = 0;
uint64_t DefaultPhiloxSeed();
void SetDefaultPhiloxSeed(uint64_t seed);

// Adds the record as fields of section "seed" (seed, deterministic,
// philox, cuda_generators, cublas_workspace_config_set) to `fp`. The flags
// themselves are captured as section "determinism" by env_capture.h, from
// LibTorch's state at capture time.
// REQUIRES: fp != nullptr.
void AddSeedRecord(const SeedRecord& record, EnvFingerprint* fp);

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_SEED_H_
