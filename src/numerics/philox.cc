#include "lockstep/numerics/philox.h"

#include <cmath>

#include "lockstep/numerics/det_math.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace lockstep {
namespace {

void MulHiLo(uint32_t a, uint32_t b, uint32_t* hi, uint32_t* lo) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  *hi = static_cast<uint32_t>(p >> 32);
  *lo = static_cast<uint32_t>(p);
}

PhiloxCounter Round(const PhiloxCounter& c, const PhiloxKey& k) {
  uint32_t hi0, lo0, hi1, lo1;
  MulHiLo(kPhiloxM0, c[0], &hi0, &lo0);
  MulHiLo(kPhiloxM1, c[2], &hi1, &lo1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

// Calls emit(block_words, lane, out_index) for each element of
// [start, start + n), one Philox block at a time.
template <typename Emit>
void ForEachElement(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                    Emit emit) {
  size_t done = 0;
  while (done < n) {
    uint64_t i = start + done;
    uint64_t block = i / 4;
    PhiloxCounter w = PhiloxBlock(seed, offset, block);
    for (unsigned lane = i % 4; lane < 4 && done < n; ++lane, ++done) {
      emit(w, lane, done);
    }
  }
}

}  // namespace

PhiloxCounter Philox4x32_10(const PhiloxCounter& ctr, const PhiloxKey& key) {
  PhiloxCounter c = Round(ctr, key);
  PhiloxKey k = key;
  for (int r = 1; r < 10; ++r) {
    k[0] += kPhiloxW0;
    k[1] += kPhiloxW1;
    c = Round(c, k);
  }
  return c;
}

PhiloxCounter PhiloxBlock(uint64_t seed, uint64_t offset, uint64_t block) {
  PhiloxKey key = {static_cast<uint32_t>(seed),
                   static_cast<uint32_t>(seed >> 32)};
  PhiloxCounter ctr = {
      static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
      static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32)};
  return Philox4x32_10(ctr, key);
}

float UniformFromBits(uint32_t x) {
  return static_cast<float>(x >> 8) * 0x1p-24f;
}

float NormalFromBits(uint32_t a, uint32_t b, bool odd_lane) {
  double u = (static_cast<double>(a) + 0.5) * 0x1p-32;
  double rad = std::sqrt(-2.0 * DetLog(u));
  double s, c;
  DetSinCosTurn(b, &s, &c);
  return static_cast<float>(rad * (odd_lane ? s : c));
}

uint64_t BernoulliThreshold(double p) {
  if (!(p > 0)) return 0;
  if (p >= 1) return uint64_t{1} << 32;
  return static_cast<uint64_t>(std::floor(p * 0x1p32));
}

void FillUint32(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                uint32_t* out) {
  ForEachElement(seed, offset, start, n,
                 [out](const PhiloxCounter& w, unsigned lane, size_t j) {
                   out[j] = w[lane];
                 });
}

void FillUniform(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                 float* out) {
  ForEachElement(seed, offset, start, n,
                 [out](const PhiloxCounter& w, unsigned lane, size_t j) {
                   out[j] = UniformFromBits(w[lane]);
                 });
}

void FillNormal(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                float* out) {
  ForEachElement(seed, offset, start, n,
                 [out](const PhiloxCounter& w, unsigned lane, size_t j) {
                   unsigned pair = lane & ~1u;
                   out[j] = NormalFromBits(w[pair], w[pair + 1], lane & 1u);
                 });
}

void FillBernoulli(uint64_t seed, uint64_t offset, uint64_t start, size_t n,
                   double p, uint8_t* out) {
  uint64_t t = BernoulliThreshold(p);
  ForEachElement(seed, offset, start, n,
                 [out, t](const PhiloxCounter& w, unsigned lane, size_t j) {
                   out[j] = w[lane] < t ? 1 : 0;
                 });
}

}  // namespace lockstep
