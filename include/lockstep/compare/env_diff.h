// Differences between two environment fingerprints (format/
// env_fingerprint.h), ranked by how likely each is to change a run's
// numbers, most likely first:
//
//   certain   parameters, data          different initial weights or inputs
//   likely    seed.*, determinism.*,    seeds, deterministic algorithms and
//             precision.*, run.*        cuDNN flags, TF32 / matmul precision /
//                                       FTZ-DAZ, caller-given run settings
//             env.CUBLAS_WORKSPACE_CONFIG, NVIDIA_TF32_OVERRIDE,
//             TORCH_ALLOW_TF32_CUBLAS_OVERRIDE, HCCL_DETERMINISTIC,
//             INF_NAN_MODE_ENABLE, MKL_CBWR, ATEN_CPU_CAPABILITY
//   possible  libtorch.*, device.*,     LibTorch version and build, CUDA
//             blas.*, cpu.aten_capability, devices, BLAS library, the vector
//             threads.*, other env.*    ISA ATen uses, thread counts
//             (OMP_NUM_THREADS, ...); also any section not listed here
//   unlikely  cpu.*, compiler.*, os.*   CPU model/flags, compilers, kernel
//   none      host.*                    hostname, capture time
//
// Within one impact, differences keep the order of the table above, then
// the order of the fields in `a`. A field absent from one fingerprint
// compares equal to an unset (null) one. Checksum lists are compared
// element by element (name, dtype, shape, crc32c) and give one difference
// each; when one side took no checksums, that is a difference of impact
// none ("not recorded").
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_ENV_DIFF_H_
#define LOCKSTEP_COMPARE_ENV_DIFF_H_

#include <string>
#include <string_view>
#include <vector>

#include "lockstep/format/env_fingerprint.h"

namespace lockstep {

enum class EnvImpact { kNone = 0, kUnlikely, kPossible, kLikely, kCertain };

// "none", "unlikely", "possible", "likely", "certain".
std::string_view EnvImpactName(EnvImpact impact);

// The impact of a difference in field section.name (table above).
EnvImpact EnvFieldImpact(std::string_view section, std::string_view name);

struct EnvDifference {
  std::string key;  // "seed.torch", or "parameters" / "data"
  EnvImpact impact = EnvImpact::kNone;
  std::string a;       // a's value as shown: text, "(unset)", or a summary
  std::string b;       // b's
  std::string detail;  // for long values: where they differ; may be empty
};

struct EnvDiff {
  std::vector<EnvDifference> differences;  // ranked, most likely first

  // Differences with impact above none (those that may change numbers).
  size_t relevant() const;
};

EnvDiff DiffEnvFingerprints(const EnvFingerprint& a, const EnvFingerprint& b);

// One line: "[likely] seed.torch: 7 vs 8", or for long values
// "[possible] libtorch.build_config: line 7: 'x' vs 'y'".
std::string DescribeEnvDifference(const EnvDifference& d);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_ENV_DIFF_H_
