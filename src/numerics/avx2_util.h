// Internal AVX2 helpers for the one-pass kernels: loading 8 floats from
// fp32/fp16/bf16 memory, horizontal reductions, and the double-precision
// accumulators shared by the pair and the statistics kernels. Every function
// here is compiled for AVX2+FMA+F16C and may only run when UseAvx2() is true;
// include this header only from *_avx2.cc files.
#ifndef LOCKSTEP_SRC_COMPARE_AVX2_UTIL_H_
#define LOCKSTEP_SRC_COMPARE_AVX2_UTIL_H_

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "lockstep/core/check.h"
#include "lockstep/numerics/dtype.h"
#include "lockstep/numerics/half.h"
#include "numerics/kernel_util.h"

#define LOCKSTEP_AVX2 __attribute__((target("avx2,fma,f16c")))

namespace lockstep::internal::avx2 {

LOCKSTEP_AVX2 inline __m256d Lo(__m256 v) {
  return _mm256_cvtps_pd(_mm256_castps256_ps128(v));
}
LOCKSTEP_AVX2 inline __m256d Hi(__m256 v) {
  return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
}

// Sources of float lanes: Load8 reads 8 elements (any alignment) as floats,
// Widen gives the same 8 as two double vectors (v = Load8(p)), One reads one
// (the same conversion, for tails and slow paths).
struct F32Src {
  using Elem = float;
  LOCKSTEP_AVX2 static __m256 Load8(const float* p) {
    return _mm256_loadu_ps(p);
  }
  // From memory: cheaper than extracting the high half of v.
  LOCKSTEP_AVX2 static void Widen(const float* p, __m256, __m256d* lo,
                                  __m256d* hi) {
    *lo = _mm256_cvtps_pd(_mm_loadu_ps(p));
    *hi = _mm256_cvtps_pd(_mm_loadu_ps(p + 4));
  }
  static float One(const float* p) { return *p; }
};
// Widen for sources that convert on load: from the converted vector.
struct WidenLoaded {
  LOCKSTEP_AVX2 static void Widen(const void*, __m256 v, __m256d* lo,
                                  __m256d* hi) {
    *lo = Lo(v);
    *hi = Hi(v);
  }
};
struct F16Src : WidenLoaded {
  using Elem = uint16_t;
  LOCKSTEP_AVX2 static __m256 Load8(const uint16_t* p) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float One(const uint16_t* p) { return HalfToFloat(*p); }
};
struct BF16Src : WidenLoaded {
  using Elem = uint16_t;
  LOCKSTEP_AVX2 static __m256 Load8(const uint16_t* p) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static float One(const uint16_t* p) { return BFloat16ToFloat(*p); }
};

// Sources of double lanes: Load4 reads 4 elements as doubles, One reads one.
// LoadFast4 is Load4 for the optimistic spans: it may return garbage for
// lanes it cannot convert exactly, and then sets bits above bit 51 in *bad.
struct F64Src {
  using Elem = double;
  LOCKSTEP_AVX2 static __m256d LoadFast4(const double* p, __m256i*) {
    return _mm256_loadu_pd(p);
  }
  LOCKSTEP_AVX2 static __m256d Load4(const double* p) {
    return LoadFast4(p, nullptr);
  }
  LOCKSTEP_AVX2 static bool Exact(__m256i) { return true; }
  static double One(const double* p) { return *p; }
};
// int64 -> double rounded to nearest like a C cast (numpy's astype).
struct I64Src {
  using Elem = int64_t;
  // Exact for the whole range without AVX-512: x = h * 2^48 + l with
  // h = x >> 48 (signed) and l the low 48 bits; both become doubles exactly
  // by placing them in the mantissa of a power of two, and the one addition
  // that joins them rounds once, so the result is correctly rounded.
  LOCKSTEP_AVX2 static __m256d Load4(const int64_t* p) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    // h * 2^32 in the low 52 bits of 3 * 2^67 (whose ulp is 2^16).
    __m256i h = _mm256_blend_epi16(_mm256_srai_epi32(x, 16),
                                   _mm256_setzero_si256(), 0x33);
    h = _mm256_add_epi64(h, _mm256_castpd_si256(_mm256_set1_pd(0x1.8p68)));
    // 2^52 + l: the exponent of 2^52 over the top 16 bits.
    __m256i l = _mm256_blend_epi16(
        x, _mm256_castpd_si256(_mm256_set1_pd(0x1p52)), 0x88);
    __m256d hi = _mm256_sub_pd(_mm256_castsi256_pd(h),
                               _mm256_set1_pd(0x1.8p68 + 0x1p52));
    return _mm256_add_pd(hi, _mm256_castsi256_pd(l));
  }
  // Faster, for |x| < 2^51 (typical: indices, counts): with M = 1.5 * 2^52
  // the bits x + M are the double M + x, and exactly then the top 12 bits
  // of x + M are those of M; otherwise bits above bit 51 land in *bad.
  LOCKSTEP_AVX2 static __m256d LoadFast4(const int64_t* p, __m256i* bad) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i magic = _mm256_set1_epi64x(0x4338000000000000LL);
    __m256i y = _mm256_add_epi64(x, magic);
    *bad = _mm256_or_si256(*bad, _mm256_xor_si256(y, magic));
    return _mm256_sub_pd(_mm256_castsi256_pd(y), _mm256_castsi256_pd(magic));
  }
  // True when no LoadFast4 has set bits in `bad`.
  LOCKSTEP_AVX2 static bool Exact(__m256i bad) {
    __m256i top = _mm256_srli_epi64(bad, 52);
    return _mm256_testz_si256(top, top);
  }
  static double One(const int64_t* p) { return static_cast<double>(*p); }
};

// Calls fn(Src{}) for dtype t if it has a double-lane source (fp64, int64)
// and returns true; returns false for other dtypes.
template <typename Fn>
bool VisitDoubleSrc(DType t, const Fn& fn) {
  switch (t) {
    case DType::kFloat64:
      fn(F64Src{});
      return true;
    case DType::kInt64:
      fn(I64Src{});
      return true;
    default:
      return false;
  }
}

// Calls fn(Src{}) for the source type of dtype t.
// REQUIRES: LaneOf(t) == Lane::kFloat.
template <typename Fn>
void VisitFloatSrc(DType t, const Fn& fn) {
  switch (t) {
    case DType::kFloat32:
      return fn(F32Src{});
    case DType::kFloat16:
      return fn(F16Src{});
    case DType::kBFloat16:
      return fn(BF16Src{});
    default:
      LOCKSTEP_CHECK(false && "VisitFloatSrc: not a float-lane dtype");
  }
}

template <typename Src>
const typename Src::Elem* At(const void* data, size_t begin) {
  return static_cast<const typename Src::Elem*>(data) + begin;
}

LOCKSTEP_AVX2 inline double HSum(__m256d v) {
  __m128d s =
      _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
// Lane maxima; NaN lanes win (the vector max instructions would drop them).
LOCKSTEP_AVX2 inline double HMax(__m256d v) {
  alignas(32) double x[4];
  _mm256_store_pd(x, v);
  return NanMax(NanMax(NanMax(x[0], x[1]), x[2]), x[3]);
}
LOCKSTEP_AVX2 inline double HMax(__m256 v) {
  return NanMax(HMax(Lo(v)), HMax(Hi(v)));
}
// Lane minimum. REQUIRES: no NaN lane.
LOCKSTEP_AVX2 inline double HMin(__m256d v) {
  alignas(32) double x[4];
  _mm256_store_pd(x, v);
  return std::min(std::min(x[0], x[1]), std::min(x[2], x[3]));
}
LOCKSTEP_AVX2 inline double HMin(__m256 v) {
  return std::min(HMin(Lo(v)), HMin(Hi(v)));
}
LOCKSTEP_AVX2 inline int64_t HSumI32(__m256i v) {
  alignas(32) int32_t x[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(x), v);
  int64_t s = 0;
  for (int32_t c : x) s += c;
  return s;
}
LOCKSTEP_AVX2 inline int64_t HSumI64(__m256i v) {
  alignas(32) int64_t x[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(x), v);
  return x[0] + x[1] + x[2] + x[3];
}
// Adds 1 to each 32-bit (64-bit) lane whose mask lane is all ones.
LOCKSTEP_AVX2 inline __m256i CountI32(__m256i c, __m256 mask) {
  return _mm256_sub_epi32(c, _mm256_castps_si256(mask));
}
LOCKSTEP_AVX2 inline __m256i CountI64(__m256i c, __m256d mask) {
  return _mm256_sub_epi64(c, _mm256_castpd_si256(mask));
}

LOCKSTEP_AVX2 inline __m256d AbsPd(__m256d v) {
  return _mm256_andnot_pd(_mm256_set1_pd(-0.0), v);
}
LOCKSTEP_AVX2 inline __m256 AbsPs(__m256 v) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

// True when some lane of a or b is NaN or +-inf (x - x is NaN exactly then).
LOCKSTEP_AVX2 inline bool AnyNonFinite(__m256 a, __m256 b) {
  __m256 u =
      _mm256_cmp_ps(_mm256_sub_ps(a, a), _mm256_sub_ps(b, b), _CMP_UNORD_Q);
  return _mm256_movemask_ps(u) != 0;
}
LOCKSTEP_AVX2 inline bool AnyNonFinite(__m256d a, __m256d b) {
  __m256d u =
      _mm256_cmp_pd(_mm256_sub_pd(a, a), _mm256_sub_pd(b, b), _CMP_UNORD_Q);
  return _mm256_movemask_pd(u) != 0;
}

// Adds the span of `groups` groups at i to k->lanes with K::Add. Not
// inlined, and free of calls, so that the lanes stay in registers (a call in
// the same loop, such as a slow path, would make the compiler keep them in
// memory).
template <typename K>
LOCKSTEP_AVX2 __attribute__((noinline)) void AddSpan(K* k, size_t i,
                                                     size_t groups) {
  K local = *k;
  for (size_t g = 0; g < groups; ++g) local.Add(i + g * K::kGroup);
  k->lanes = local.lanes;
}

// The same with K::Checked, which may change more than the lanes.
template <typename K>
LOCKSTEP_AVX2 __attribute__((noinline)) void CheckedSpan(K* k, size_t i,
                                                         size_t groups) {
  K local = *k;
  for (size_t g = 0; g < groups; ++g) local.Checked(i + g * K::kGroup);
  *k = local;
}

// Runs a vector kernel K over elements [0, n). K provides:
//   kGroup            elements per vector step;
//   Lanes lanes       its vector accumulators (copyable);
//   Add(i)            adds the group at i to `lanes`, not looking for NaN/inf;
//   Finite()          false if the span must be redone with Checked: a NaN
//                     or inf has reached `lanes`, or a fast load was inexact
//                     (false alarms, e.g. overflowing sums, only cost time);
//   Checked(i)        adds the group at i whatever its values (NaN and inf
//                     counted and left out of the sums, in the lanes or
//                     through Scalar);
//   Scalar(i)         adds element i with the scalar arithmetic;
//   Flush()           moves `lanes` into the result.
// Spans of up to 64 whole groups run optimistically with Add; a span after
// which Finite() fails is rolled back and redone with Checked. After such a
// span the next 1, 2, 4, ... (up to 64) go straight to Checked, so that data
// with NaN/inf throughout (a causal attention mask's -inf) is not added
// twice. The tail (less than a group) goes through Scalar.
template <typename K>
LOCKSTEP_AVX2 void RunKernel(K* k, size_t n) {
  constexpr size_t kGroups = 64;
  size_t i = 0, skip = 0, backoff = 1;
  while (i + K::kGroup <= n) {
    size_t groups = std::min(kGroups, (n - i) / K::kGroup);
    size_t end = i + groups * K::kGroup;
    bool checked = skip > 0;
    if (checked) {
      --skip;
    } else {
      typename K::Lanes saved = k->lanes;
      AddSpan(k, i, groups);
      if (__builtin_expect(!k->Finite(), 0)) {
        k->lanes = saved;
        checked = true;
        skip = backoff;
        backoff = std::min<size_t>(backoff * 2, 64);
      } else {
        backoff = 1;
      }
    }
    if (checked) CheckedSpan(k, i, groups);
    i = end;
  }
  for (; i < n; ++i) k->Scalar(i);
  k->Flush();
}

}  // namespace lockstep::internal::avx2

#endif  // LOCKSTEP_SRC_COMPARE_AVX2_UTIL_H_
