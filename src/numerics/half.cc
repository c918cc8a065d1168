#include "lockstep/numerics/half.h"

#include <immintrin.h>

#include <bit>

#include "lockstep/numerics/cpu_features.h"

namespace lockstep {
namespace {

constexpr uint32_t kF32ExpMask = 0x7f800000u;
constexpr uint32_t kF32AbsMask = 0x7fffffffu;
// Float bit patterns of the fp16 thresholds: 65520 (halfway between the fp16
// maximum and 2^16, rounds to inf) and 2^-14 (smallest normal fp16).
constexpr uint32_t kHalfOverflow = 0x477ff000u;
constexpr uint32_t kHalfMinNormal = 0x38800000u;

// Rounds `m >> s` to nearest, ties to even. REQUIRES 1 <= s <= 31.
uint32_t ShiftRoundEven(uint32_t m, uint32_t s) {
  uint32_t q = m >> s;
  uint32_t rem = m & ((1u << s) - 1);
  uint32_t half = 1u << (s - 1);
  return q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
}

__attribute__((target("avx2,f16c"))) void HalfToFloatF16C(const uint16_t* in,
                                                          float* out,
                                                          size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = HalfToFloat(in[i]);
}

__attribute__((target("avx2"))) void BFloat16ToFloatAvx2(const uint16_t* in,
                                                         float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), w);
  }
  for (; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
}

}  // namespace

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) {
    // Inf or NaN. A NaN is quietened, as the F16C instruction does.
    uint32_t quiet = man != 0 ? 0x400000u : 0;
    return std::bit_cast<float>(sign | kF32ExpMask | quiet | (man << 13));
  }
  if (exp != 0)
    return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
  if (man == 0) return std::bit_cast<float>(sign);
  // Subnormal man * 2^-24: move the leading 1 to bit 10 (the implicit bit).
  uint32_t shift = static_cast<uint32_t>(std::countl_zero(man)) - 21;
  man <<= shift;
  return std::bit_cast<float>(sign | ((113 - shift) << 23) |
                              ((man & 0x3ffu) << 13));
}

uint16_t FloatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  x &= kF32AbsMask;
  if (x > kF32ExpMask)
    return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
  if (x >= kHalfOverflow) return static_cast<uint16_t>(sign | 0x7c00u);
  if (x >= kHalfMinNormal) {
    // Rebias the exponent (127 -> 15) and round away the low 13 bits; a
    // carry out of the mantissa correctly bumps the exponent.
    return static_cast<uint16_t>(sign | ShiftRoundEven(x - (112u << 23), 13));
  }
  uint32_t e = x >> 23;
  if (e < 102) return static_cast<uint16_t>(sign);  // below 2^-25: rounds to 0
  // Subnormal result m * 2^-24 with m = significand >> (126 - e).
  uint32_t m = (x & 0x7fffffu) | 0x800000u;
  return static_cast<uint16_t>(sign | ShiftRoundEven(m, 126 - e));
}

float BFloat16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & kF32AbsMask) > kF32ExpMask)
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even; may carry into inf
  return static_cast<uint16_t>(x >> 16);
}

namespace internal {

void HalfToFloatPortable(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = HalfToFloat(in[i]);
}

void BFloat16ToFloatPortable(const uint16_t* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
}

bool HalfBatchUsesF16C() { return CpuLevelActive(CpuLevel::kAvx2); }

}  // namespace internal

void HalfToFloat(const uint16_t* in, float* out, size_t n) {
  if (internal::HalfBatchUsesF16C()) {
    HalfToFloatF16C(in, out, n);
  } else {
    internal::HalfToFloatPortable(in, out, n);
  }
}

void BFloat16ToFloat(const uint16_t* in, float* out, size_t n) {
  if (internal::HalfBatchUsesF16C()) {
    BFloat16ToFloatAvx2(in, out, n);
  } else {
    internal::BFloat16ToFloatPortable(in, out, n);
  }
}

}  // namespace lockstep
