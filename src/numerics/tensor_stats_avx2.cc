// AVX2 tensor-statistics kernels. Vector lanes do what AccumulateStatOne does
// (min/max exact, sums in double, NaN and inf counted and left out); the
// tail goes through AccumulateStatOne itself (see avx2::RunKernel).
#include <algorithm>

#include "numerics/avx2_util.h"
#include "numerics/tensor_stats_scalar.h"

namespace lockstep::internal {
namespace {

// Double sums: two sets of 4 lanes, so that consecutive vectors do not wait
// on each other's add/FMA latency.
struct StatSums {
  __m256d sum[2], sum_sq[2];

  LOCKSTEP_AVX2 void Init() {
    sum[0] = sum[1] = sum_sq[0] = sum_sq[1] = _mm256_setzero_pd();
  }
  // Adds 4 lanes to set j.
  LOCKSTEP_AVX2 void Add(int j, __m256d x) {
    sum[j] = _mm256_add_pd(sum[j], x);
    sum_sq[j] = _mm256_fmadd_pd(x, x, sum_sq[j]);
  }
  // A NaN or inf input makes sum_sq NaN or inf for good (terms are >= 0).
  LOCKSTEP_AVX2 bool Finite() const {
    return !avx2::AnyNonFinite(sum_sq[0], sum_sq[1]);
  }
  LOCKSTEP_AVX2 void FlushTo(TensorStats* s) const {
    s->sum += avx2::HSum(_mm256_add_pd(sum[0], sum[1]));
    s->sum_sq += avx2::HSum(_mm256_add_pd(sum_sq[0], sum_sq[1]));
  }
};

// Counts of NaN, +inf and -inf for the groups that hold any (Checked), so
// that a tensor with many (a causal attention mask's -inf) stays in the
// vector lanes instead of going element by element. Kept outside a kernel's
// Lanes: only Checked counts, and Checked spans are never rolled back.
struct NonFiniteCounts {
  int64_t nan = 0, pos_inf = 0, neg_inf = 0;

  // Counts v's non-finite lanes; returns their mask.
  LOCKSTEP_AVX2 __m256 Count(__m256 v) {
    __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    __m256 is_inf =
        _mm256_cmp_ps(avx2::AbsPs(v), _mm256_set1_ps(INFINITY), _CMP_EQ_OQ);
    __m256 positive = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ);
    nan += __builtin_popcount(_mm256_movemask_ps(is_nan));
    pos_inf +=
        __builtin_popcount(_mm256_movemask_ps(_mm256_and_ps(is_inf, positive)));
    neg_inf += __builtin_popcount(
        _mm256_movemask_ps(_mm256_andnot_ps(positive, is_inf)));
    return _mm256_or_ps(is_nan, is_inf);
  }
  void FlushTo(TensorStats* s) const {
    s->nan += nan;
    s->pos_inf += pos_inf;
    s->neg_inf += neg_inf;
  }
};

// v with its `bad` lanes replaced by 0 (for sums), +inf (for the minimum)
// and -inf (for the maximum).
struct MaskedLanes {
  __m256 zeroed, for_min, for_max;
  LOCKSTEP_AVX2 MaskedLanes(__m256 v, __m256 bad)
      : zeroed(_mm256_andnot_ps(bad, v)),
        for_min(_mm256_blendv_ps(v, _mm256_set1_ps(INFINITY), bad)),
        for_max(_mm256_blendv_ps(v, _mm256_set1_ps(-INFINITY), bad)) {}
};

// Float lanes (8 per group) from a float-lane source: min/max and the
// saturation counts in float (exact), sums in double.
template <typename Src>
struct FloatStatsKernel {
  static constexpr size_t kGroup = 8;
  struct Lanes {
    StatSums sums;
    __m256 min, max;
    __m256i c_half, c_bf16;
  };
  const typename Src::Elem* x;
  TensorStats* s;
  Lanes lanes;
  NonFiniteCounts non_finite;

  LOCKSTEP_AVX2 void Init() {
    lanes.sums.Init();
    lanes.min = _mm256_set1_ps(INFINITY);
    lanes.max = _mm256_set1_ps(-INFINITY);
    lanes.c_half = lanes.c_bf16 = _mm256_setzero_si256();
  }
  // v: the 8 elements at i.
  LOCKSTEP_AVX2 void AddValues(size_t i, __m256 v) {
    lanes.min = _mm256_min_ps(lanes.min, v);
    lanes.max = _mm256_max_ps(lanes.max, v);
    CountSaturated(v);
    __m256d lo, hi;
    Src::Widen(x + i, v, &lo, &hi);
    lanes.sums.Add(0, lo);
    lanes.sums.Add(1, hi);
  }
  LOCKSTEP_AVX2 void CountSaturated(__m256 v) {
    __m256 av = avx2::AbsPs(v);
    __m256 half_max = _mm256_set1_ps(static_cast<float>(kHalfMax));
    __m256 bf16_max = _mm256_set1_ps(static_cast<float>(kBFloat16Max));
    lanes.c_half =
        avx2::CountI32(lanes.c_half, _mm256_cmp_ps(av, half_max, _CMP_EQ_OQ));
    lanes.c_bf16 =
        avx2::CountI32(lanes.c_bf16, _mm256_cmp_ps(av, bf16_max, _CMP_EQ_OQ));
  }
  LOCKSTEP_AVX2 void Add(size_t i) { AddValues(i, Src::Load8(x + i)); }
  LOCKSTEP_AVX2 bool Finite() const { return lanes.sums.Finite(); }
  LOCKSTEP_AVX2 void Checked(size_t i) {
    __m256 v = Src::Load8(x + i);
    MaskedLanes m(v, non_finite.Count(v));
    lanes.min = _mm256_min_ps(lanes.min, m.for_min);
    lanes.max = _mm256_max_ps(lanes.max, m.for_max);
    CountSaturated(m.zeroed);
    lanes.sums.Add(0, avx2::Lo(m.zeroed));
    lanes.sums.Add(1, avx2::Hi(m.zeroed));
  }
  LOCKSTEP_AVX2 void Scalar(size_t i) { AccumulateStatOne(Src::One(x + i), s); }
  LOCKSTEP_AVX2 void Flush() {
    lanes.sums.FlushTo(s);
    non_finite.FlushTo(s);
    s->min = std::min(s->min, avx2::HMin(lanes.min));
    s->max = std::max(s->max, avx2::HMax(lanes.max));
    s->at_half_max += avx2::HSumI32(lanes.c_half);
    s->at_bf16_max += avx2::HSumI32(lanes.c_bf16);
  }
};

// Float lanes, 16 per group, for ComputeTensorMoments: min/max in float
// (exact), sums in double in four chains (two groups' worth of add/FMA
// latency in flight), no saturation counts.
template <typename Src>
struct FloatMomentsKernel {
  static constexpr size_t kGroup = 16;
  struct Lanes {
    StatSums sums[2];
    __m256 min, max;
  };
  const typename Src::Elem* x;
  TensorStats* s;
  Lanes lanes;
  NonFiniteCounts non_finite;

  LOCKSTEP_AVX2 void Init() {
    lanes.sums[0].Init();
    lanes.sums[1].Init();
    lanes.min = _mm256_set1_ps(INFINITY);
    lanes.max = _mm256_set1_ps(-INFINITY);
  }
  // v: the 8 elements at i, into sum set h.
  LOCKSTEP_AVX2 void AddValues(int h, size_t i, __m256 v) {
    lanes.min = _mm256_min_ps(lanes.min, v);
    lanes.max = _mm256_max_ps(lanes.max, v);
    __m256d lo, hi;
    Src::Widen(x + i, v, &lo, &hi);
    lanes.sums[h].Add(0, lo);
    lanes.sums[h].Add(1, hi);
  }
  LOCKSTEP_AVX2 void Add(size_t i) {
    AddValues(0, i, Src::Load8(x + i));
    AddValues(1, i + 8, Src::Load8(x + i + 8));
  }
  LOCKSTEP_AVX2 bool Finite() const {
    return lanes.sums[0].Finite() && lanes.sums[1].Finite();
  }
  LOCKSTEP_AVX2 void Checked(size_t i) {
    for (int h = 0; h < 2; ++h) {
      size_t j = i + 8 * static_cast<size_t>(h);
      __m256 v = Src::Load8(x + j);
      MaskedLanes m(v, non_finite.Count(v));
      lanes.min = _mm256_min_ps(lanes.min, m.for_min);
      lanes.max = _mm256_max_ps(lanes.max, m.for_max);
      lanes.sums[h].Add(0, avx2::Lo(m.zeroed));
      lanes.sums[h].Add(1, avx2::Hi(m.zeroed));
    }
  }
  LOCKSTEP_AVX2 void Scalar(size_t i) { AccumulateStatOne(Src::One(x + i), s); }
  LOCKSTEP_AVX2 void Flush() {
    lanes.sums[0].FlushTo(s);
    lanes.sums[1].FlushTo(s);
    non_finite.FlushTo(s);
    s->min = std::min(s->min, avx2::HMin(lanes.min));
    s->max = std::max(s->max, avx2::HMax(lanes.max));
  }
};

// Double lanes (8 per group, two vectors) from a double-lane source.
template <typename Src>
struct DoubleStatsKernel {
  static constexpr size_t kGroup = 8;
  struct Lanes {
    StatSums sums;
    __m256d min, max;
    __m256i c_half, c_bf16;
    __m256i bad;  // see LoadFast4
  };
  const typename Src::Elem* x;
  TensorStats* s;
  Lanes lanes;

  LOCKSTEP_AVX2 void Init() {
    lanes.sums.Init();
    lanes.min = _mm256_set1_pd(INFINITY);
    lanes.max = _mm256_set1_pd(-INFINITY);
    lanes.c_half = lanes.c_bf16 = lanes.bad = _mm256_setzero_si256();
  }
  LOCKSTEP_AVX2 void AddValues(int j, __m256d v) {
    lanes.min = _mm256_min_pd(lanes.min, v);
    lanes.max = _mm256_max_pd(lanes.max, v);
    __m256d av = avx2::AbsPd(v);
    __m256d half_max = _mm256_set1_pd(kHalfMax);
    __m256d bf16_max = _mm256_set1_pd(kBFloat16Max);
    lanes.c_half =
        avx2::CountI64(lanes.c_half, _mm256_cmp_pd(av, half_max, _CMP_EQ_OQ));
    lanes.c_bf16 =
        avx2::CountI64(lanes.c_bf16, _mm256_cmp_pd(av, bf16_max, _CMP_EQ_OQ));
    lanes.sums.Add(j, v);
  }
  LOCKSTEP_AVX2 void Add(size_t i) {
    AddValues(0, Src::LoadFast4(x + i, &lanes.bad));
    AddValues(1, Src::LoadFast4(x + i + 4, &lanes.bad));
  }
  LOCKSTEP_AVX2 bool Finite() const {
    return lanes.sums.Finite() && Src::Exact(lanes.bad);
  }
  LOCKSTEP_AVX2 void Checked(size_t i) {
    for (size_t j = i; j < i + kGroup; j += 4) {
      __m256d v = Src::Load4(x + j);
      if (!avx2::AnyNonFinite(v, v)) {
        AddValues(0, v);
      } else {
        for (size_t k = j; k < j + 4; ++k) Scalar(k);
      }
    }
  }
  LOCKSTEP_AVX2 void Scalar(size_t i) { AccumulateStatOne(Src::One(x + i), s); }
  LOCKSTEP_AVX2 void Flush() {
    lanes.sums.FlushTo(s);
    s->min = std::min(s->min, avx2::HMin(lanes.min));
    s->max = std::max(s->max, avx2::HMax(lanes.max));
    s->at_half_max += avx2::HSumI64(lanes.c_half);
    s->at_bf16_max += avx2::HSumI64(lanes.c_bf16);
  }
};

template <template <typename> class Kernel, typename Src>
LOCKSTEP_AVX2 void RunStats(const void* data, size_t begin, size_t n,
                            TensorStats* s) {
  Kernel<Src> k{};
  k.x = avx2::At<Src>(data, begin);
  k.s = s;
  k.Init();
  avx2::RunKernel(&k, n);
}

}  // namespace

void StatsFloatAvx2(DType t, const void* data, size_t begin, size_t n,
                    TensorStats* s) {
  LOCKSTEP_DCHECK(n <= kChunk);
  avx2::VisitFloatSrc(t, [&](auto src) {
    RunStats<FloatStatsKernel, decltype(src)>(data, begin, n, s);
  });
}

void MomentsFloatAvx2(DType t, const void* data, size_t n, TensorStats* s) {
  avx2::VisitFloatSrc(t, [&](auto src) {
    RunStats<FloatMomentsKernel, decltype(src)>(data, 0, n, s);
  });
}

bool StatsDoubleDirectAvx2(DType t, const void* data, size_t begin, size_t n,
                           TensorStats* s) {
  LOCKSTEP_DCHECK(n <= kChunk);
  return avx2::VisitDoubleSrc(t, [&](auto src) {
    RunStats<DoubleStatsKernel, decltype(src)>(data, begin, n, s);
  });
}

void StatsDoubleAvx2(const double* x, size_t n, TensorStats* s) {
  RunStats<DoubleStatsKernel, avx2::F64Src>(x, 0, n, s);
}

}  // namespace lockstep::internal
