// Synthetic training runs for tests and benchmarks: a chain of operators
// whose output feeds the next one's input, dumped in the msprobe layout
// (tensor task, .npy tensors, statistics in dump.json) with DumpWriter.
// A fault can be injected at one operator: a precision loss (output scaled
// by 1 + rel), NaN or inf in the output, a changed output shape, or the
// operator missing altogether; every later operator sees the damage.
#ifndef LOCKSTEP_TESTS_TESTING_SYNTHETIC_RUN_H_
#define LOCKSTEP_TESTS_TESTING_SYNTHETIC_RUN_H_

#include <cstdint>
#include <string>

#include "lockstep/core/status.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep::testing {

enum class Fault { kNone, kPrecision, kNan, kInf, kShape, kMissing, kInserted };

struct SyntheticRun {
  int ops = 8;              // operators in the chain
  int64_t elements = 1000;  // per tensor
  DType dtype = DType::kFloat32;
  uint64_t seed = 1;
  Fault fault = Fault::kNone;
  int fault_op = -1;            // which operator (0-based)
  double rel = 1e-2;            // relative perturbation for kPrecision
  std::string task = "tensor";  // or "statistics" (no tensor files)
  bool packed = false;          // tensors in dump_tensor_data.pack
};

// The name of operator k: "Functional.<api>.<n>.forward", apis cycling
// through linear, relu, gelu, layer_norm, softmax with their own call counts.
std::string SyntheticOpName(int k);

// Writes the run into `rank_dir` (dump.json and dump_tensor_data/, or
// dump_tensor_data.pack when run.packed).
Status WriteSyntheticRun(const SyntheticRun& run, const std::string& rank_dir);

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_SYNTHETIC_RUN_H_
