// AVX2 pair-metrics kernels. The vector lanes do exactly what
// AccumulatePairOne does for finite elements (the same float32 or float64
// operations for RE, double for the rest); groups holding a NaN or inf, and
// the tail, go through AccumulatePairOne itself (see avx2::RunKernel).
#include <cmath>

#include "numerics/avx2_util.h"
#include "numerics/metrics_scalar.h"

namespace lockstep::internal {
namespace {

using avx2::AbsPd;
using avx2::AbsPs;

// Double-precision accumulators for 4 lanes: dot, norms, sum of squared
// differences, max |a - b|. One set only: a pair group is long enough to
// hide the FMA latency, and a second set would spill registers.
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
    max_abs = _mm256_max_pd(max_abs, AbsPd(d));
  }
  // A NaN or inf input makes a2 or b2 NaN or inf for good (their terms are
  // >= 0). Finite but huge doubles may overflow too: that only costs a redo.
  LOCKSTEP_AVX2 bool Finite() const { return !avx2::AnyNonFinite(a2, b2); }
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

// Float lanes of a pair read from SA/SB sources: RE max and threshold
// counts in float32 (8 lanes, 32-bit counters: n < 2^31), sums in double.
template <typename SA, typename SB>
struct FloatPairKernel {
  static constexpr size_t kGroup = 8;
  struct Lanes {
    DoubleSums sums;
    __m256 max_re;
    __m256i c1, c5;
  };
  const typename SA::Elem* a;
  const typename SB::Elem* b;
  PairMetrics* m;
  Lanes lanes;

  LOCKSTEP_AVX2 void Init() {
    lanes.sums.Init();
    lanes.max_re = _mm256_setzero_ps();
    lanes.c1 = lanes.c5 = _mm256_setzero_si256();
  }
  // va, vb: the 8 elements at i.
  LOCKSTEP_AVX2 void AddValues(size_t i, __m256 va, __m256 vb) {
    __m256 re = RelErr(va, vb);
    lanes.max_re = _mm256_max_ps(lanes.max_re, re);
    __m256 tol1 = _mm256_set1_ps(RelErrConsts<float>::kTol1);
    __m256 tol5 = _mm256_set1_ps(RelErrConsts<float>::kTol5);
    lanes.c1 = avx2::CountI32(lanes.c1, _mm256_cmp_ps(re, tol1, _CMP_LT_OQ));
    lanes.c5 = avx2::CountI32(lanes.c5, _mm256_cmp_ps(re, tol5, _CMP_LT_OQ));
    __m256d a_lo, a_hi, b_lo, b_hi;
    SA::Widen(a + i, va, &a_lo, &a_hi);
    SB::Widen(b + i, vb, &b_lo, &b_hi);
    lanes.sums.Add(a_lo, b_lo);
    lanes.sums.Add(a_hi, b_hi);
  }
  LOCKSTEP_AVX2 void Add(size_t i) {
    AddValues(i, SA::Load8(a + i), SB::Load8(b + i));
  }
  LOCKSTEP_AVX2 bool Finite() const { return lanes.sums.Finite(); }
  LOCKSTEP_AVX2 void Checked(size_t i) {
    __m256 va = SA::Load8(a + i), vb = SB::Load8(b + i);
    if (!avx2::AnyNonFinite(va, vb)) return AddValues(i, va, vb);
    for (size_t k = i; k < i + kGroup; ++k) Scalar(k);
  }
  LOCKSTEP_AVX2 void Scalar(size_t i) {
    AccumulatePairOne<float>(SA::One(a + i), SB::One(b + i), m);
  }
  LOCKSTEP_AVX2 void Flush() {
    lanes.sums.FlushTo(m);
    m->max_rel_err = NanMax(m->max_rel_err, avx2::HMax(lanes.max_re));
    m->rel_lt_1e3 += avx2::HSumI32(lanes.c1);
    m->rel_lt_5e3 += avx2::HSumI32(lanes.c5);
  }
};

// Double lanes read from SA/SB sources (8 elements, two vectors per side,
// per group).
template <typename SA, typename SB>
struct DoublePairKernel {
  static constexpr size_t kGroup = 8;
  struct Lanes {
    DoubleSums sums;
    __m256d max_re;
    __m256i c1, c5;
    __m256i bad;  // see LoadFast4
  };
  const typename SA::Elem* a;
  const typename SB::Elem* b;
  PairMetrics* m;
  Lanes lanes;

  LOCKSTEP_AVX2 void Init() {
    lanes.sums.Init();
    lanes.max_re = _mm256_setzero_pd();
    lanes.c1 = lanes.c5 = lanes.bad = _mm256_setzero_si256();
  }
  LOCKSTEP_AVX2 void AddValues(__m256d va, __m256d vb) {
    __m256d re = RelErr(va, vb);
    lanes.max_re = _mm256_max_pd(lanes.max_re, re);
    __m256d tol1 = _mm256_set1_pd(RelErrConsts<double>::kTol1);
    __m256d tol5 = _mm256_set1_pd(RelErrConsts<double>::kTol5);
    lanes.c1 = avx2::CountI64(lanes.c1, _mm256_cmp_pd(re, tol1, _CMP_LT_OQ));
    lanes.c5 = avx2::CountI64(lanes.c5, _mm256_cmp_pd(re, tol5, _CMP_LT_OQ));
    lanes.sums.Add(va, vb);
  }
  LOCKSTEP_AVX2 void Add(size_t i) {
    __m256i* bad = &lanes.bad;
    AddValues(SA::LoadFast4(a + i, bad), SB::LoadFast4(b + i, bad));
    AddValues(SA::LoadFast4(a + i + 4, bad), SB::LoadFast4(b + i + 4, bad));
  }
  LOCKSTEP_AVX2 bool Finite() const {
    return lanes.sums.Finite() && SA::Exact(lanes.bad) && SB::Exact(lanes.bad);
  }
  LOCKSTEP_AVX2 void Checked(size_t i) {
    for (size_t j = i; j < i + kGroup; j += 4) {
      __m256d va = SA::Load4(a + j), vb = SB::Load4(b + j);
      if (!avx2::AnyNonFinite(va, vb)) {
        AddValues(va, vb);
      } else {
        for (size_t k = j; k < j + 4; ++k) Scalar(k);
      }
    }
  }
  LOCKSTEP_AVX2 void Scalar(size_t i) {
    AccumulatePairOne<double>(SA::One(a + i), SB::One(b + i), m);
  }
  LOCKSTEP_AVX2 void Flush() {
    lanes.sums.FlushTo(m);
    m->max_rel_err = NanMax(m->max_rel_err, avx2::HMax(lanes.max_re));
    m->rel_lt_1e3 += avx2::HSumI64(lanes.c1);
    m->rel_lt_5e3 += avx2::HSumI64(lanes.c5);
  }
};

// Runs Kernel<SA, SB> over n elements of a and b.
template <template <typename, typename> class Kernel, typename SA, typename SB>
LOCKSTEP_AVX2 void RunPair(const void* a, const void* b, size_t begin, size_t n,
                           PairMetrics* m) {
  Kernel<SA, SB> k{avx2::At<SA>(a, begin), avx2::At<SB>(b, begin), m, {}};
  k.Init();
  avx2::RunKernel(&k, n);
}

}  // namespace

void PairFloatAvx2(DType ta, const void* a, DType tb, const void* b,
                   size_t begin, size_t n, PairMetrics* m) {
  LOCKSTEP_DCHECK(n <= kChunk);
  avx2::VisitFloatSrc(ta, [&](auto sa) {
    avx2::VisitFloatSrc(tb, [&](auto sb) {
      RunPair<FloatPairKernel, decltype(sa), decltype(sb)>(a, b, begin, n, m);
    });
  });
}

bool PairDoubleDirectAvx2(DType ta, const void* a, DType tb, const void* b,
                          size_t begin, size_t n, PairMetrics* m) {
  LOCKSTEP_DCHECK(n <= kChunk);
  bool done = false;
  avx2::VisitDoubleSrc(ta, [&](auto sa) {
    done = avx2::VisitDoubleSrc(tb, [&](auto sb) {
      RunPair<DoublePairKernel, decltype(sa), decltype(sb)>(a, b, begin, n, m);
    });
  });
  return done;
}

void PairDoubleAvx2(const double* a, const double* b, size_t n,
                    PairMetrics* m) {
  RunPair<DoublePairKernel, avx2::F64Src, avx2::F64Src>(a, b, 0, n, m);
}

}  // namespace lockstep::internal
