#include "lockstep/numerics/metrics.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "lockstep/core/check.h"
#include "numerics/kernel_util.h"
#include "numerics/metrics_scalar.h"

namespace lockstep {
namespace {

// Converts blocks to T and runs the AVX2 double kernel or the scalar loop.
template <typename T>
void BlockChunk(DType ta, const void* a, DType tb, const void* b, size_t begin,
                size_t end, bool avx2, PairMetrics* m) {
  internal::ForEachBlockPair<T>(ta, a, tb, b, begin, end,
                                [&](const T* pa, const T* pb, size_t len) {
                                  if constexpr (std::is_same_v<T, double>) {
                                    if (avx2) {
                                      internal::PairDoubleAvx2(pa, pb, len, m);
                                      return;
                                    }
                                  }
                                  internal::AccumulatePairs(pa, pb, len, m);
                                });
}

}  // namespace

DType RelErrDType(DType a, DType b) {
  return internal::PairLane(a, b) == internal::Lane::kFloat ? DType::kFloat32
                                                            : DType::kFloat64;
}

PairMetrics ComputePairMetrics(DType type_a, const void* a, DType type_b,
                               const void* b, size_t n, int threads) {
  bool float_lane =
      internal::PairLane(type_a, type_b) == internal::Lane::kFloat;
  bool avx2 = internal::UseAvx2();
  auto chunk = [&](size_t begin, size_t end, PairMetrics* m) {
    if (float_lane && avx2) {
      internal::PairFloatAvx2(type_a, a, type_b, b, begin, end - begin, m);
    } else if (float_lane) {
      BlockChunk<float>(type_a, a, type_b, b, begin, end, false, m);
    } else if (!avx2 || !internal::PairDoubleDirectAvx2(
                            type_a, a, type_b, b, begin, end - begin, m)) {
      BlockChunk<double>(type_a, a, type_b, b, begin, end, avx2, m);
    }
    m->n = static_cast<int64_t>(end - begin);
  };
  return internal::ReduceChunks<PairMetrics>(n, threads, chunk,
                                             MergePairMetrics);
}

void MergePairMetrics(const PairMetrics& part, PairMetrics* total) {
  total->n += part.n;
  total->nonfinite_mismatch |= part.nonfinite_mismatch;
  total->nan_a += part.nan_a;
  total->nan_b += part.nan_b;
  total->inf_a += part.inf_a;
  total->inf_b += part.inf_b;
  total->dot += part.dot;
  total->sum_a2 += part.sum_a2;
  total->sum_b2 += part.sum_b2;
  total->sum_d2 += part.sum_d2;
  total->max_abs_diff =
      internal::NanMax(total->max_abs_diff, part.max_abs_diff);
  total->max_rel_err = internal::NanMax(total->max_rel_err, part.max_rel_err);
  total->rel_lt_1e3 += part.rel_lt_1e3;
  total->rel_lt_5e3 += part.rel_lt_5e3;
}

double Cosine(const PairMetrics& m) {
  double norms = std::sqrt(m.sum_a2) * std::sqrt(m.sum_b2);
  if (!(norms > 0)) return std::nan("");
  return m.dot / norms;
}

double OneMinusCosine(const PairMetrics& m) {
  double na = std::sqrt(m.sum_a2), nb = std::sqrt(m.sum_b2);
  if (!(na > 0) || !(nb > 0) || !std::isfinite(na * nb)) return std::nan("");
  double diff = na - nb;
  double v = (m.sum_d2 - diff * diff) / (2 * na * nb);
  if (std::isnan(v)) return v;
  return std::clamp(v, 0.0, 2.0);
}

double EuclideanDistance(const PairMetrics& m) { return std::sqrt(m.sum_d2); }

}  // namespace lockstep
