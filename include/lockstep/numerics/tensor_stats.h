// TensorStats: one-pass, mergeable statistics of a single tensor (min, max,
// mean, L2 norm, and the counts that overflow checks need: NaN, +inf, -inf,
// and values saturated at the fp16 or bf16 maximum), computed in double by a
// parallel, vectorized kernel.
//
// NaN and +-inf are counted but excluded from min, max, sum and sum_sq.
// Elements are converted to double first (exact for every float dtype;
// int64/uint64 beyond 2^53 round to nearest, as numpy's astype(float64)).
// The result is identical for any thread count (fixed chunks merged in order).
// Thread safety: pure functions; TensorStats is a plain value.
#ifndef LOCKSTEP_NUMERICS_TENSOR_STATS_H_
#define LOCKSTEP_NUMERICS_TENSOR_STATS_H_

#include <cstddef>
#include <cstdint>
#include <limits>

#include "lockstep/numerics/dtype.h"

namespace lockstep {

struct TensorStats {
  int64_t n = 0;       // elements
  int64_t finite = 0;  // elements that are neither NaN nor +-inf
  int64_t nan = 0;
  int64_t pos_inf = 0;
  int64_t neg_inf = 0;
  int64_t at_half_max = 0;  // |x| == 65504 (kHalfMax)
  int64_t at_bf16_max = 0;  // |x| == 3.3895313892515355e38 (kBFloat16Max)
  // Over finite elements. With none, min is +inf and max is -inf (the
  // identity of the merge).
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double sum = 0;     // sum x
  double sum_sq = 0;  // sum x^2
};

// Computes the statistics of the n elements of a raw little-endian buffer
// on up to `threads` threads (<= 1: the calling thread only). Any dtype; 0
// elements give the identity (compare/tensor_stats.h takes a Tensor).
// REQUIRES: data holds n elements of `type`; any alignment.
TensorStats ComputeTensorStats(DType type, const void* data, size_t n,
                               int threads);

// The same on the calling thread without the saturation counts
// (at_half_max and at_bf16_max are 0), for callers that need only the
// counts of NaN/inf, min, max and the sums: the probe summarizing every
// tensor of a training step. Float32/16/bf16 run a kernel with more
// independent sums, so `sum` and `sum_sq` may differ from
// ComputeTensorStats's in the last bits (both are double sums of the
// exactly converted elements, in different orders).
TensorStats ComputeTensorMoments(DType type, const void* data, size_t n);

// Adds `part` (the statistics of the elements after those in *total) into
// *total: counts and sums add, min/max take the min/max. The identity is a
// default TensorStats.
void MergeTensorStats(const TensorStats& part, TensorStats* total);

// sum / finite: the mean of the finite elements; NaN when there are none.
double Mean(const TensorStats& s);
// sqrt(sum_sq): the L2 norm of the finite elements.
double L2Norm(const TensorStats& s);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_TENSOR_STATS_H_
