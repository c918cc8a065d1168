// PairMetrics of two Tensors: numerics/metrics.h's fused kernel over their
// buffers. Thread safety: a pure function.
#ifndef LOCKSTEP_COMPARE_METRICS_H_
#define LOCKSTEP_COMPARE_METRICS_H_

#include <cstddef>

#include "lockstep/core/check.h"
#include "lockstep/format/tensor.h"
#include "lockstep/numerics/metrics.h"

namespace lockstep {

// The metrics of a pair of tensors element by element in C order, on up to
// `threads` threads (<= 1: the calling thread only). Shapes are not
// compared, only element counts. All dtypes are accepted, mixed too.
// REQUIRES: a.numel() == b.numel().
inline PairMetrics ComputePairMetrics(const Tensor& a, const Tensor& b,
                                      int threads) {
  LOCKSTEP_CHECK(a.numel() == b.numel());
  return ComputePairMetrics(a.dtype(), a.data(), b.dtype(), b.data(),
                            static_cast<size_t>(a.numel()), threads);
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_METRICS_H_
