// IEEE binary16 ("fp16", torch.float16) and bfloat16 (torch.bfloat16)
// conversions to and from float, one value at a time and in batches.
// Values are passed as their raw 16-bit patterns (little-endian in memory).
//
// Widening (16 -> 32 bits) is exact for every pattern: signed zeros,
// subnormals and infinities keep their value, and a NaN stays a NaN with its
// sign and payload (shifted into the high mantissa bits). An fp16 NaN also
// gets the quiet bit set, as the F16C instruction does; a bf16 NaN keeps its
// bits exactly (the widening is a shift). Narrowing (32 -> 16 bits) rounds to
// nearest, ties to even; values too large become +-inf, too small become +-0
// (sign kept); NaN stays NaN (sign and the top payload bits kept, the quiet bit
// set).
//
// The batch converters use F16C/AVX2 when the CPU has them (checked once at
// run time) and a portable loop otherwise; both give identical results.
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_HALF_H_
#define LOCKSTEP_NUMERICS_HALF_H_

#include <cstddef>
#include <cstdint>

namespace lockstep {

// Largest finite fp16 and bf16 values.
inline constexpr double kHalfMax = 65504.0;
inline constexpr double kBFloat16Max = 3.3895313892515355e38;

// fp16 bit pattern -> float. Exact.
float HalfToFloat(uint16_t h);
// float -> fp16 bit pattern, round to nearest even. |f| >= 65520 -> +-inf.
uint16_t FloatToHalf(float f);

// bf16 bit pattern -> float. Exact (the pattern becomes the high 16 bits).
float BFloat16ToFloat(uint16_t b);
// float -> bf16 bit pattern, round to nearest even. Values that round above
// the bf16 maximum become +-inf.
uint16_t FloatToBFloat16(float f);

// Batch forms: out[i] = HalfToFloat(in[i]) / BFloat16ToFloat(in[i]) for
// i in [0, n). REQUIRES: `in` and `out` valid for n elements and not
// overlapping. No alignment requirement.
void HalfToFloat(const uint16_t* in, float* out, size_t n);
void BFloat16ToFloat(const uint16_t* in, float* out, size_t n);

namespace internal {
// Portable batch loops (the fallback when F16C/AVX2 are absent); exposed so
// that tests can compare them with the dispatched versions.
void HalfToFloatPortable(const uint16_t* in, float* out, size_t n);
void BFloat16ToFloatPortable(const uint16_t* in, float* out, size_t n);
// True when the batch converters use F16C/AVX2: this CPU has them and
// CpuLevelLimit() (cpu_features.h) allows kAvx2.
bool HalfBatchUsesF16C();
}  // namespace internal

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_HALF_H_
