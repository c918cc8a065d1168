#include "lockstep/numerics/tensor_stats.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "numerics/kernel_util.h"
#include "numerics/tensor_stats_scalar.h"

namespace lockstep {
namespace {

// Converts blocks to T and runs the AVX2 double kernel or the scalar loop.
template <typename T>
void BlockChunk(DType t, const void* data, size_t begin, size_t end, bool avx2,
                TensorStats* s) {
  internal::ForEachBlock<T>(t, data, begin, end, [&](const T* x, size_t len) {
    if constexpr (std::is_same_v<T, double>) {
      if (avx2) {
        internal::StatsDoubleAvx2(x, len, s);
        return;
      }
    }
    internal::AccumulateStats(x, len, s);
  });
}

}  // namespace

TensorStats ComputeTensorStats(DType type, const void* data, size_t n,
                               int threads) {
  bool float_lane = internal::LaneOf(type) == internal::Lane::kFloat;
  bool avx2 = internal::UseAvx2();
  auto chunk = [&](size_t begin, size_t end, TensorStats* s) {
    if (float_lane && avx2) {
      internal::StatsFloatAvx2(type, data, begin, end - begin, s);
    } else if (float_lane) {
      BlockChunk<float>(type, data, begin, end, false, s);
    } else if (!avx2 || !internal::StatsDoubleDirectAvx2(type, data, begin,
                                                         end - begin, s)) {
      BlockChunk<double>(type, data, begin, end, avx2, s);
    }
    s->n = static_cast<int64_t>(end - begin);
    s->finite = s->n - s->nan - s->pos_inf - s->neg_inf;
  };
  return internal::ReduceChunks<TensorStats>(n, threads, chunk,
                                             MergeTensorStats);
}

TensorStats ComputeTensorMoments(DType type, const void* data, size_t n) {
  if (internal::LaneOf(type) != internal::Lane::kFloat ||
      !internal::UseAvx2()) {
    TensorStats s = ComputeTensorStats(type, data, n, 1);
    s.at_half_max = s.at_bf16_max = 0;
    return s;
  }
  TensorStats s;
  internal::MomentsFloatAvx2(type, data, n, &s);
  s.at_half_max = s.at_bf16_max = 0;  // the scalar path counted its part
  s.n = static_cast<int64_t>(n);
  s.finite = s.n - s.nan - s.pos_inf - s.neg_inf;
  return s;
}

void MergeTensorStats(const TensorStats& part, TensorStats* total) {
  total->n += part.n;
  total->finite += part.finite;
  total->nan += part.nan;
  total->pos_inf += part.pos_inf;
  total->neg_inf += part.neg_inf;
  total->at_half_max += part.at_half_max;
  total->at_bf16_max += part.at_bf16_max;
  total->min = std::min(total->min, part.min);
  total->max = std::max(total->max, part.max);
  total->sum += part.sum;
  total->sum_sq += part.sum_sq;
}

double Mean(const TensorStats& s) {
  return s.finite > 0 ? s.sum / static_cast<double>(s.finite) : std::nan("");
}

double L2Norm(const TensorStats& s) { return std::sqrt(s.sum_sq); }

}  // namespace lockstep
