// Internal: the tensor-statistics arithmetic for one element, written
// plainly. It is the portable kernel and the AVX2 kernels' path for
// non-finite lanes and tails.
#ifndef LOCKSTEP_SRC_COMPARE_TENSOR_STATS_SCALAR_H_
#define LOCKSTEP_SRC_COMPARE_TENSOR_STATS_SCALAR_H_

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "lockstep/numerics/dtype.h"
#include "lockstep/numerics/half.h"
#include "lockstep/numerics/tensor_stats.h"

namespace lockstep::internal {

// Adds x to *s. Does not count s->n or s->finite.
inline void AccumulateStatOne(double x, TensorStats* s) {
  if (!std::isfinite(x)) {
    if (std::isnan(x)) {
      ++s->nan;
    } else if (x > 0) {
      ++s->pos_inf;
    } else {
      ++s->neg_inf;
    }
    return;
  }
  s->min = std::min(s->min, x);
  s->max = std::max(s->max, x);
  s->sum += x;
  s->sum_sq += x * x;
  double ax = std::fabs(x);
  s->at_half_max += ax == kHalfMax;
  s->at_bf16_max += ax == kBFloat16Max;
}

template <typename T>
inline void AccumulateStats(const T* x, size_t n, TensorStats* s) {
  for (size_t i = 0; i < n; ++i) AccumulateStatOne(x[i], s);
}

// AVX2 kernels (tensor_stats_avx2.cc). REQUIRES: UseAvx2(); n <= kChunk.
// Elements [begin, begin + n) of float-lane data, read directly.
void StatsFloatAvx2(DType t, const void* data, size_t begin, size_t n,
                    TensorStats* s);
// Elements [begin, begin + n) of fp64 or int64 data, read directly; returns
// false (doing nothing) for other dtypes.
bool StatsDoubleDirectAvx2(DType t, const void* data, size_t begin, size_t n,
                           TensorStats* s);
// All n elements of float-lane data for ComputeTensorMoments (any n).
void MomentsFloatAvx2(DType t, const void* data, size_t n, TensorStats* s);
// Converted blocks (see ForEachBlock).
void StatsDoubleAvx2(const double* x, size_t n, TensorStats* s);

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_COMPARE_TENSOR_STATS_SCALAR_H_
