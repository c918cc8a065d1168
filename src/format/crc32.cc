#include "lockstep/format/crc32.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>

#include "lockstep/numerics/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define LOCKSTEP_CRC_CLMUL 1
#endif

namespace lockstep {
namespace {

constexpr uint64_t kZlibChunk = uint64_t{1} << 30;  // zlib lengths are uInt

std::atomic<bool> g_portable_only{false};

// zlib's crc32 over any length (it takes at most a uInt at a time).
uint32_t ZlibCrc(uint32_t crc, const unsigned char* p, uint64_t n) {
  uLong c = crc;
  for (uint64_t done = 0; done < n;) {
    auto k = static_cast<uInt>(std::min(kZlibChunk, n - done));
    c = crc32(c, p + done, k);
    done += k;
  }
  return static_cast<uint32_t>(c);
}

#ifdef LOCKSTEP_CRC_CLMUL
#define LOCKSTEP_CLMUL __attribute__((target("pclmul,sse4.1")))

// Constants of the reflected CRC-32 polynomial P = 0x104C11DB7 (bit
// reversed, each a 33-bit value): x^(k) mod P for the fold distances, and
// P' with Barrett's mu = floor(x^64 / P) for the final reduction.
constexpr uint64_t kFold512Lo = 0x154442bd4;  // x^(4*128+32) mod P
constexpr uint64_t kFold512Hi = 0x1c6e41596;  // x^(4*128-32) mod P
constexpr uint64_t kFold128Lo = 0x1751997d0;  // x^(128+32) mod P
constexpr uint64_t kFold128Hi = 0x0ccaa009e;  // x^(128-32) mod P
constexpr uint64_t kFold64 = 0x163cd6124;     // x^64 mod P
constexpr uint64_t kPoly = 0x1db710641;       // P, reflected
constexpr uint64_t kMu = 0x1f7011641;         // x^64 / P, reflected

// One fold: x * (the constants) carried 128 bits forward, plus `next`.
LOCKSTEP_CLMUL inline __m128i Fold(__m128i x, __m128i k, __m128i next) {
  __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
  __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

LOCKSTEP_CLMUL inline __m128i Load(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// The register state (not inverted) after `n` bytes, n >= 64 and a multiple
// of 16, starting from `state`.
LOCKSTEP_CLMUL uint32_t ClmulState(uint32_t state, const unsigned char* p,
                                   uint64_t n) {
  __m128i x0 =
      _mm_xor_si128(Load(p), _mm_cvtsi32_si128(static_cast<int>(state)));
  __m128i x1 = Load(p + 16), x2 = Load(p + 32), x3 = Load(p + 48);
  p += 64;
  n -= 64;
  const __m128i k512 = _mm_set_epi64x(static_cast<long long>(kFold512Hi),
                                      static_cast<long long>(kFold512Lo));
  while (n >= 64) {
    x0 = Fold(x0, k512, Load(p));
    x1 = Fold(x1, k512, Load(p + 16));
    x2 = Fold(x2, k512, Load(p + 32));
    x3 = Fold(x3, k512, Load(p + 48));
    p += 64;
    n -= 64;
  }
  const __m128i k128 = _mm_set_epi64x(static_cast<long long>(kFold128Hi),
                                      static_cast<long long>(kFold128Lo));
  __m128i x = Fold(x0, k128, x1);
  x = Fold(x, k128, x2);
  x = Fold(x, k128, x3);
  while (n >= 16) {
    x = Fold(x, k128, Load(p));
    p += 16;
    n -= 16;
  }
  // 128 bits to 64: the low half times x^(128-32) mod P onto the high half.
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  x = _mm_xor_si128(_mm_clmulepi64_si128(x, k128, 0x10), _mm_srli_si128(x, 8));
  // 64 bits to 32 (+32 of headroom): the low 32 times x^64 mod P.
  const __m128i k64 = _mm_set_epi64x(0, static_cast<long long>(kFold64));
  x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), k64, 0x00),
                    _mm_srli_si128(x, 4));
  // Barrett: q = (low32(x) * mu) mod x^32, x ^= q * P; the CRC is bits 32..63.
  const __m128i pmu = _mm_set_epi64x(static_cast<long long>(kMu),
                                     static_cast<long long>(kPoly));
  __m128i q = _mm_clmulepi64_si128(_mm_and_si128(x, low32), pmu, 0x10);
  q = _mm_clmulepi64_si128(_mm_and_si128(q, low32), pmu, 0x00);
  x = _mm_xor_si128(x, q);
  return static_cast<uint32_t>(_mm_extract_epi32(x, 1));
}
#endif  // LOCKSTEP_CRC_CLMUL

}  // namespace

uint32_t Crc32Update(uint32_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  uint64_t n = data.size();
#ifdef LOCKSTEP_CRC_CLMUL
  if (n >= 64 && HostCpuFeatures().pclmul &&
      !g_portable_only.load(std::memory_order_relaxed)) {
    uint64_t bulk = n & ~uint64_t{15};
    crc = ~ClmulState(~crc, p, bulk);
    p += bulk;
    n -= bulk;
  }
#endif
  return ZlibCrc(crc, p, n);
}

uint32_t Crc32Combine(uint32_t crc_a, uint32_t crc_b, uint64_t size_b) {
  return static_cast<uint32_t>(
      crc32_combine64(crc_a, crc_b, static_cast<z_off64_t>(size_b)));
}

bool SetCrc32PortableOnly(bool portable_only) {
  return g_portable_only.exchange(portable_only);
}

uint32_t Crc32(std::string_view data) { return Crc32Update(0, data); }

}  // namespace lockstep
