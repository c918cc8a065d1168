// TensorStats of a Tensor: numerics/tensor_stats.h's kernels over the
// tensor's buffer. Thread safety: a pure function.
#ifndef LOCKSTEP_COMPARE_TENSOR_STATS_H_
#define LOCKSTEP_COMPARE_TENSOR_STATS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "lockstep/format/tensor.h"
#include "lockstep/numerics/tensor_stats.h"

namespace lockstep {

// The statistics of all elements of t on up to `threads` threads (<= 1: the
// calling thread only). Any dtype; 0 elements give the identity.
inline TensorStats ComputeTensorStats(const Tensor& t, int threads) {
  return ComputeTensorStats(
      t.dtype(), t.data(), static_cast<size_t>(std::max<int64_t>(t.numel(), 0)),
      threads);
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_TENSOR_STATS_H_
