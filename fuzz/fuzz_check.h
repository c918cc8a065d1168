// What the fuzz targets that read tensors share: a check that stops the run
// (a crash libFuzzer and the bounded driver report), and a checksum that
// reads every byte of a tensor (out-of-bounds reads show under ASan).
#ifndef LOCKSTEP_FUZZ_FUZZ_CHECK_H_
#define LOCKSTEP_FUZZ_FUZZ_CHECK_H_

#include <cstdint>
#include <cstdlib>

#include "lockstep/format/tensor.h"

namespace lockstep::fuzz {

inline void Require(bool ok) {
  if (!ok) std::abort();
}

// FNV-1a over the tensor's bytes.
inline uint64_t Checksum(const Tensor& t) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < t.nbytes(); ++i) {
    h = (h ^ static_cast<uint8_t>(t.data()[i])) * 1099511628211ull;
  }
  return h;
}

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_FUZZ_CHECK_H_
