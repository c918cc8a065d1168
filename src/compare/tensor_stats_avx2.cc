// AVX2 tensor-statistics kernels. Vector lanes do what AccumulateStatOne does
// for finite elements (min/max exact in the source precision, sums in
// double); a group of lanes holding a NaN or inf, and the tail, go through
// AccumulateStatOne itself.
#include <algorithm>

#include "compare/avx2_util.h"
#include "compare/tensor_stats_scalar.h"

namespace lockstep::internal {
namespace {

// Double sums and saturation counts shared by both kernels.
struct StatSums {
  __m256d sum, sum_sq;

  LOCKSTEP_AVX2 void Init() { sum = sum_sq = _mm256_setzero_pd(); }
  LOCKSTEP_AVX2 void Add(__m256d x) {
    sum = _mm256_add_pd(sum, x);
    sum_sq = _mm256_fmadd_pd(x, x, sum_sq);
  }
  LOCKSTEP_AVX2 void FlushTo(TensorStats* s) const {
    s->sum += avx2::HSum(sum);
    s->sum_sq += avx2::HSum(sum_sq);
  }
};

template <typename Src>
LOCKSTEP_AVX2 void StatsFloat(const typename Src::Elem* x, size_t n,
                              TensorStats* s) {
  const __m256 half_max = _mm256_set1_ps(static_cast<float>(kHalfMax));
  const __m256 bf16_max = _mm256_set1_ps(static_cast<float>(kBFloat16Max));
  __m256 vmin = _mm256_set1_ps(INFINITY), vmax = _mm256_set1_ps(-INFINITY);
  __m256i c_half = _mm256_setzero_si256(), c_bf16 = _mm256_setzero_si256();
  StatSums lo, hi;
  lo.Init();
  hi.Init();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = Src::Load8(x + i);
    if (__builtin_expect(avx2::AnyNonFinite(v, v), 0)) {
      for (size_t k = i; k < i + 8; ++k) AccumulateStatOne(Src::One(x + k), s);
      continue;
    }
    vmin = _mm256_min_ps(vmin, v);
    vmax = _mm256_max_ps(vmax, v);
    __m256 av = avx2::AbsPs(v);
    c_half = avx2::CountI32(c_half, _mm256_cmp_ps(av, half_max, _CMP_EQ_OQ));
    c_bf16 = avx2::CountI32(c_bf16, _mm256_cmp_ps(av, bf16_max, _CMP_EQ_OQ));
    lo.Add(avx2::Lo(v));
    hi.Add(avx2::Hi(v));
  }
  for (; i < n; ++i) AccumulateStatOne(Src::One(x + i), s);
  lo.FlushTo(s);
  hi.FlushTo(s);
  s->min = std::min(s->min, avx2::HMin(vmin));
  s->max = std::max(s->max, avx2::HMax(vmax));
  s->at_half_max += avx2::HSumI32(c_half);
  s->at_bf16_max += avx2::HSumI32(c_bf16);
}

}  // namespace

void StatsFloatAvx2(DType t, const void* data, size_t begin, size_t n,
                    TensorStats* s) {
  LOCKSTEP_DCHECK(n <= kChunk);
  avx2::VisitFloatSrc(t, [&](auto src) {
    using Src = decltype(src);
    StatsFloat<Src>(avx2::At<Src>(data, begin), n, s);
  });
}

LOCKSTEP_AVX2 void StatsDoubleAvx2(const double* x, size_t n, TensorStats* s) {
  const __m256d half_max = _mm256_set1_pd(kHalfMax);
  const __m256d bf16_max = _mm256_set1_pd(kBFloat16Max);
  __m256d vmin = _mm256_set1_pd(INFINITY), vmax = _mm256_set1_pd(-INFINITY);
  __m256i c_half = _mm256_setzero_si256(), c_bf16 = _mm256_setzero_si256();
  StatSums sums[2];
  sums[0].Init();
  sums[1].Init();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d v[2] = {_mm256_loadu_pd(x + i), _mm256_loadu_pd(x + i + 4)};
    if (__builtin_expect(avx2::AnyNonFinite(v[0], v[1]), 0)) {
      AccumulateStats(x + i, 8, s);
      continue;
    }
    for (int j = 0; j < 2; ++j) {
      vmin = _mm256_min_pd(vmin, v[j]);
      vmax = _mm256_max_pd(vmax, v[j]);
      __m256d av = avx2::AbsPd(v[j]);
      c_half = avx2::CountI64(c_half, _mm256_cmp_pd(av, half_max, _CMP_EQ_OQ));
      c_bf16 = avx2::CountI64(c_bf16, _mm256_cmp_pd(av, bf16_max, _CMP_EQ_OQ));
      sums[j].Add(v[j]);
    }
  }
  AccumulateStats(x + i, n - i, s);
  sums[0].FlushTo(s);
  sums[1].FlushTo(s);
  s->min = std::min(s->min, avx2::HMin(vmin));
  s->max = std::max(s->max, avx2::HMax(vmax));
  s->at_half_max += avx2::HSumI64(c_half);
  s->at_bf16_max += avx2::HSumI64(c_bf16);
}

}  // namespace lockstep::internal
