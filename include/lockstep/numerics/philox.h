// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11; the Random123 library) and counter-based random streams built on it.
//
// Stream mapping (the contract that makes runs reproducible). Element i
// (uint64) of the stream (seed, offset) depends only on (seed, offset, i):
//   block = i / 4, lane = i % 4,
//   key     = {seed & 0xffffffff, seed >> 32},
//   counter = {block & 0xffffffff, block >> 32, offset & 0xffffffff,
//              offset >> 32},
//   word(i) = Philox4x32_10(counter, key)[lane].
// So any device, thread count or chunking that computes element i gets the
// same bits. `offset` selects independent sub-streams (e.g. one per step).
//
// Distributions, element i of each:
//   uint32    word(i).
//   uniform   float((word(i) >> 8) * 2^-24): the 2^24 values k * 2^-24,
//             k in [0, 2^24), each exactly representable; result in [0, 1).
//   normal    Box-Muller on the lane pair of i: with p = lane / 2,
//             a = word(4*block + 2p), b = word(4*block + 2p + 1),
//             u = (a + 0.5) * 2^-32 (double, exact, in (0, 1)),
//             rad = sqrt(-2.0 * DetLog(u))  (sqrt is IEEE correctly rounded),
//             DetSinCosTurn(b, &s, &c)  (angle 2*pi*b/2^32; see det_math.h),
//             z = rad * c for even lanes, rad * s for odd lanes (double),
//             result = (float)z (round to nearest even). |z| < 6.8.
//             Bit-identical on every IEEE binary64 platform (det_math.h).
//   bernoulli threshold T = 0 if p <= 0 or p is NaN, 2^32 if p >= 1, else
//             floor(p * 2^32) (exact in double); result = word(i) < T ? 1 : 0.
//             So P(1) = T / 2^32, within 2^-32 of p; p = 0 gives all 0 and
//             p = 1 all 1.
//
// The Fill* functions write elements [start, start + n) of a stream to
// out[0, n); filling a range in chunks gives exactly the same output as one
// call. REQUIRES for all of them: `out` valid for n elements and
// start + n <= 2^64 (no wrap-around). Thread safety: pure functions; calls
// on disjoint output ranges may run concurrently.
#ifndef LOCKSTEP_NUMERICS_PHILOX_H_
#define LOCKSTEP_NUMERICS_PHILOX_H_

#include <array>
#include <cstddef>
#include <cstdint>

namespace lockstep {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// Round multipliers and Weyl key increments of Philox4x32 (Random123).
inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

// The Philox4x32 bijection with 10 rounds, as Random123's philox4x32_R(10,
// ctr, key): the key is bumped by (W0, W1) before rounds 2..10.
PhiloxCounter Philox4x32_10(const PhiloxCounter& ctr, const PhiloxKey& key);

// The four words of block `block` of stream (seed, offset) (mapping above).
PhiloxCounter PhiloxBlock(uint64_t seed, uint64_t offset, uint64_t block);

// Elements [start, start + n) of each distribution (definitions above).
void FillUint32(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                uint32_t* out);
void FillUniform(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                 float* out);
void FillNormal(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                float* out);
void FillBernoulli(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                   double p, uint8_t* out);

// The per-element maps, exposed for tests and other generators.
float UniformFromBits(uint32_t x);
// z for the pair (a, b); `odd_lane` picks the sine output.
float NormalFromBits(uint32_t a, uint32_t b, bool odd_lane);
// The Bernoulli threshold T (as a uint64 in [0, 2^32]).
uint64_t BernoulliThreshold(double p);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_PHILOX_H_
