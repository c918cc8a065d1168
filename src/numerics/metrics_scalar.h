// Internal: the pair-metrics arithmetic for one element, written plainly.
// It is the portable kernel, the AVX2 kernels' path for blocks holding
// non-finite values and tails, and the definition the vector code follows.
#ifndef LOCKSTEP_SRC_COMPARE_METRICS_SCALAR_H_
#define LOCKSTEP_SRC_COMPARE_METRICS_SCALAR_H_

#include <cmath>
#include <cstddef>

#include "lockstep/numerics/metrics.h"
#include "numerics/kernel_util.h"

namespace lockstep::internal {

// numpy's finfo(T).eps and the RE thresholds, in T (msprobe compares the
// float32 RE array with the Python floats 0.001 / 0.005 in float32).
template <typename T>
struct RelErrConsts;
template <>
struct RelErrConsts<float> {
  static constexpr float kEps = 1.1920929e-07f;
  static constexpr float kTol1 = 0.001f;
  static constexpr float kTol5 = 0.005f;
};
template <>
struct RelErrConsts<double> {
  static constexpr double kEps = 2.220446049250313e-16;
  static constexpr double kTol1 = 0.001;
  static constexpr double kTol5 = 0.005;
};

// Adds element (a, b) to *m, T being the RE type. Does not count m->n.
template <typename T>
inline void AccumulatePairOne(T a, T b, PairMetrics* m) {
  if (!std::isfinite(a) || !std::isfinite(b)) {
    bool nan_a = std::isnan(a), nan_b = std::isnan(b);
    bool inf_a = std::isinf(a), inf_b = std::isinf(b);
    m->nan_a += nan_a;
    m->nan_b += nan_b;
    m->inf_a += inf_a;
    m->inf_b += inf_b;
    if (nan_a == nan_b && inf_a == inf_b) {
      a = 0;  // msprobe's handle_inf_nan zeroes matched positions
      b = 0;
    } else {
      m->nonfinite_mismatch = true;
    }
  }
  double da = a, db = b, d = da - db;
  m->dot += da * db;
  m->sum_a2 += da * da;
  m->sum_b2 += db * db;
  m->sum_d2 += d * d;
  m->max_abs_diff = NanMax(m->max_abs_diff, std::fabs(d));
  T e = b == 0 ? RelErrConsts<T>::kEps : T{0};
  T bb = b + e;
  T re = std::fabs(((a + e) - bb) / bb);
  m->max_rel_err = NanMax(m->max_rel_err, re);
  m->rel_lt_1e3 += re < RelErrConsts<T>::kTol1;
  m->rel_lt_5e3 += re < RelErrConsts<T>::kTol5;
}

template <typename T>
inline void AccumulatePairs(const T* a, const T* b, size_t n, PairMetrics* m) {
  for (size_t i = 0; i < n; ++i) AccumulatePairOne<T>(a[i], b[i], m);
}

// AVX2 kernels (metrics_avx2.cc). REQUIRES: UseAvx2(); n <= kChunk.
// Elements [begin, begin + n) of a float-lane pair, read directly.
void PairFloatAvx2(DType ta, const void* a, DType tb, const void* b,
                   size_t begin, size_t n, PairMetrics* m);
// Elements [begin, begin + n) of a pair whose dtypes are both fp64 or int64,
// read directly; returns false (doing nothing) for other dtypes.
bool PairDoubleDirectAvx2(DType ta, const void* a, DType tb, const void* b,
                          size_t begin, size_t n, PairMetrics* m);
// Converted blocks (see ForEachBlockPair).
void PairDoubleAvx2(const double* a, const double* b, size_t n, PairMetrics* m);

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_COMPARE_METRICS_SCALAR_H_
