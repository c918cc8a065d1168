// AVX2 pair-metrics kernels. The vector lanes do exactly what
// AccumulatePairOne does for finite elements (the same float32 or float64
// operations for RE, double for the rest); a group of lanes holding a NaN or
// inf, and the tail, go through AccumulatePairOne itself.
#include <cmath>

#include "compare/avx2_util.h"
#include "compare/metrics_scalar.h"

namespace lockstep::internal {
namespace {

using avx2::AbsPd;
using avx2::AbsPs;

// Double-precision accumulators for 4 lanes: dot, norms, sum of squared
// differences, max |a - b|.
struct DoubleSums {
  __m256d dot, a2, b2, d2, max_abs;

  LOCKSTEP_AVX2 void Init() {
    dot = a2 = b2 = d2 = max_abs = _mm256_setzero_pd();
  }
  LOCKSTEP_AVX2 void Add(__m256d a, __m256d b) {
    __m256d d = _mm256_sub_pd(a, b);
    dot = _mm256_fmadd_pd(a, b, dot);
    a2 = _mm256_fmadd_pd(a, a, a2);
    b2 = _mm256_fmadd_pd(b, b, b2);
    d2 = _mm256_fmadd_pd(d, d, d2);
    max_abs = _mm256_max_pd(max_abs, AbsPd(d));  // finite lanes only: no NaN
  }
  LOCKSTEP_AVX2 void Fold(const DoubleSums& o) {
    dot = _mm256_add_pd(dot, o.dot);
    a2 = _mm256_add_pd(a2, o.a2);
    b2 = _mm256_add_pd(b2, o.b2);
    d2 = _mm256_add_pd(d2, o.d2);
    max_abs = _mm256_max_pd(max_abs, o.max_abs);
  }
  LOCKSTEP_AVX2 void FlushTo(PairMetrics* m) const {
    m->dot += avx2::HSum(dot);
    m->sum_a2 += avx2::HSum(a2);
    m->sum_b2 += avx2::HSum(b2);
    m->sum_d2 += avx2::HSum(d2);
    m->max_abs_diff = NanMax(m->max_abs_diff, avx2::HMax(max_abs));
  }
};

// RE = |((a + e) - (b + e)) / (b + e)|, e = eps where b == 0, in float32.
LOCKSTEP_AVX2 inline __m256 RelErr(__m256 a, __m256 b) {
  const __m256 eps = _mm256_set1_ps(RelErrConsts<float>::kEps);
  __m256 e =
      _mm256_and_ps(_mm256_cmp_ps(b, _mm256_setzero_ps(), _CMP_EQ_OQ), eps);
  __m256 bb = _mm256_add_ps(b, e);
  return AbsPs(_mm256_div_ps(_mm256_sub_ps(_mm256_add_ps(a, e), bb), bb));
}
// The same in float64.
LOCKSTEP_AVX2 inline __m256d RelErr(__m256d a, __m256d b) {
  const __m256d eps = _mm256_set1_pd(RelErrConsts<double>::kEps);
  __m256d e =
      _mm256_and_pd(_mm256_cmp_pd(b, _mm256_setzero_pd(), _CMP_EQ_OQ), eps);
  __m256d bb = _mm256_add_pd(b, e);
  return AbsPd(_mm256_div_pd(_mm256_sub_pd(_mm256_add_pd(a, e), bb), bb));
}

// Float lanes of a pair: RE max and threshold counts in float32, sums in
// double (two accumulator sets, low and high 4 lanes).
// REQUIRES: n < 2^31 (32-bit lane counters).
template <typename SA, typename SB>
LOCKSTEP_AVX2 void PairFloat(const typename SA::Elem* a,
                             const typename SB::Elem* b, size_t n,
                             PairMetrics* m) {
  const __m256 tol1 = _mm256_set1_ps(RelErrConsts<float>::kTol1);
  const __m256 tol5 = _mm256_set1_ps(RelErrConsts<float>::kTol5);
  DoubleSums lo, hi;
  lo.Init();
  hi.Init();
  __m256 max_re = _mm256_setzero_ps();
  __m256i c1 = _mm256_setzero_si256(), c5 = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 va = SA::Load8(a + i), vb = SB::Load8(b + i);
    if (__builtin_expect(avx2::AnyNonFinite(va, vb), 0)) {
      for (size_t k = i; k < i + 8; ++k) {
        AccumulatePairOne<float>(SA::One(a + k), SB::One(b + k), m);
      }
      continue;
    }
    __m256 re = RelErr(va, vb);
    max_re = _mm256_max_ps(max_re, re);
    c1 = avx2::CountI32(c1, _mm256_cmp_ps(re, tol1, _CMP_LT_OQ));
    c5 = avx2::CountI32(c5, _mm256_cmp_ps(re, tol5, _CMP_LT_OQ));
    lo.Add(avx2::Lo(va), avx2::Lo(vb));
    hi.Add(avx2::Hi(va), avx2::Hi(vb));
  }
  for (; i < n; ++i)
    AccumulatePairOne<float>(SA::One(a + i), SB::One(b + i), m);
  lo.Fold(hi);
  lo.FlushTo(m);
  m->max_rel_err = NanMax(m->max_rel_err, avx2::HMax(max_re));
  m->rel_lt_1e3 += avx2::HSumI32(c1);
  m->rel_lt_5e3 += avx2::HSumI32(c5);
}

// RE max and counts for 4 double lanes.
struct DoubleRel {
  __m256d max_re;
  __m256i c1, c5;

  LOCKSTEP_AVX2 void Init() {
    max_re = _mm256_setzero_pd();
    c1 = c5 = _mm256_setzero_si256();
  }
  LOCKSTEP_AVX2 void Add(__m256d a, __m256d b) {
    __m256d re = RelErr(a, b);
    max_re = _mm256_max_pd(max_re, re);
    c1 = avx2::CountI64(
        c1, _mm256_cmp_pd(re, _mm256_set1_pd(RelErrConsts<double>::kTol1),
                          _CMP_LT_OQ));
    c5 = avx2::CountI64(
        c5, _mm256_cmp_pd(re, _mm256_set1_pd(RelErrConsts<double>::kTol5),
                          _CMP_LT_OQ));
  }
  LOCKSTEP_AVX2 void FlushTo(PairMetrics* m) const {
    m->max_rel_err = NanMax(m->max_rel_err, avx2::HMax(max_re));
    m->rel_lt_1e3 += avx2::HSumI64(c1);
    m->rel_lt_5e3 += avx2::HSumI64(c5);
  }
};

}  // namespace

void PairFloatAvx2(DType ta, const void* a, DType tb, const void* b,
                   size_t begin, size_t n, PairMetrics* m) {
  LOCKSTEP_DCHECK(n <= kChunk);
  avx2::VisitFloatSrc(ta, [&](auto sa) {
    avx2::VisitFloatSrc(tb, [&](auto sb) {
      using SA = decltype(sa);
      using SB = decltype(sb);
      PairFloat<SA, SB>(avx2::At<SA>(a, begin), avx2::At<SB>(b, begin), n, m);
    });
  });
}

LOCKSTEP_AVX2 void PairDoubleAvx2(const double* a, const double* b, size_t n,
                                  PairMetrics* m) {
  DoubleSums sums[2];
  DoubleRel rel[2];
  for (int j = 0; j < 2; ++j) {
    sums[j].Init();
    rel[j].Init();
  }
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d a0 = _mm256_loadu_pd(a + i), a1 = _mm256_loadu_pd(a + i + 4);
    __m256d b0 = _mm256_loadu_pd(b + i), b1 = _mm256_loadu_pd(b + i + 4);
    if (__builtin_expect(
            avx2::AnyNonFinite(_mm256_add_pd(a0, a1), _mm256_add_pd(b0, b1)),
            0)) {
      AccumulatePairs(a + i, b + i, 8, m);
      continue;
    }
    sums[0].Add(a0, b0);
    sums[1].Add(a1, b1);
    rel[0].Add(a0, b0);
    rel[1].Add(a1, b1);
  }
  AccumulatePairs(a + i, b + i, n - i, m);
  sums[0].Fold(sums[1]);
  sums[0].FlushTo(m);
  rel[0].FlushTo(m);
  rel[1].FlushTo(m);
}

}  // namespace lockstep::internal
