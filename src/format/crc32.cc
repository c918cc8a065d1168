#include "lockstep/format/crc32.h"

#include <zlib.h>

#include <algorithm>
#include <array>

#include "lockstep/numerics/cpu_features.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define LOCKSTEP_CRC_CLMUL 1
#endif

namespace lockstep {
namespace {

constexpr uint64_t kZlibChunk = uint64_t{1} << 30;  // zlib lengths are uInt

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

// Folds the 16-byte blocks left in [p, p + n) into `x`, then reduces it to
// the 32-bit register state (Barrett).
LOCKSTEP_CLMUL uint32_t Finish(__m128i x, const unsigned char* p, uint64_t n) {
  const __m128i k128 = _mm_set_epi64x(static_cast<long long>(kFold128Hi),
                                      static_cast<long long>(kFold128Lo));
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

// The register state (not inverted) after `n` bytes, n >= 64 and a multiple
// of 16, starting from `state`: four 16-byte lanes folded 64 bytes at a time.
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
  return Finish(x, p, n);
}

// The same with 512-bit registers (VPCLMULQDQ): four 64-byte accumulators
// folded 256 bytes at a time, then one, then its four lanes into one.
#define LOCKSTEP_VCLMUL \
  __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))

constexpr uint64_t kFold2048Lo = 0x11542778a;  // x^(2048+32) mod P
constexpr uint64_t kFold2048Hi = 0x1322d1430;  // x^(2048-32) mod P
constexpr uint64_t kFold384Lo = 0x03db1ecdc;   // x^(384+32) mod P
constexpr uint64_t kFold384Hi = 0x174359406;   // x^(384-32) mod P
constexpr uint64_t kFold256Lo = 0x0f1da05aa;   // x^(256+32) mod P
constexpr uint64_t kFold256Hi = 0x15a546366;   // x^(256-32) mod P

LOCKSTEP_VCLMUL inline __m512i Fold4(__m512i x, __m512i k, __m512i next) {
  __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
  __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
  return _mm512_ternarylogic_epi64(lo, hi, next, 0x96);  // lo ^ hi ^ next
}

LOCKSTEP_VCLMUL inline __m512i Load4(const unsigned char* p) {
  return _mm512_loadu_si512(p);
}

LOCKSTEP_VCLMUL inline __m512i Broadcast(uint64_t hi, uint64_t lo) {
  return _mm512_broadcast_i32x4(
      _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo)));
}

// x folded forward by the distance whose constants are (hi, lo).
LOCKSTEP_VCLMUL inline __m128i Carry(__m128i x, uint64_t hi, uint64_t lo) {
  __m128i k =
      _mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo));
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
                       _mm_clmulepi64_si128(x, k, 0x11));
}

// REQUIRES: n >= 256 and a multiple of 16.
LOCKSTEP_VCLMUL uint32_t VclmulState(uint32_t state, const unsigned char* p,
                                     uint64_t n) {
  __m512i z0 = _mm512_xor_si512(
      Load4(p),
      _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(state))));
  __m512i z1 = Load4(p + 64), z2 = Load4(p + 128), z3 = Load4(p + 192);
  p += 256;
  n -= 256;
  const __m512i k2048 = Broadcast(kFold2048Hi, kFold2048Lo);
  while (n >= 256) {
    z0 = Fold4(z0, k2048, Load4(p));
    z1 = Fold4(z1, k2048, Load4(p + 64));
    z2 = Fold4(z2, k2048, Load4(p + 128));
    z3 = Fold4(z3, k2048, Load4(p + 192));
    p += 256;
    n -= 256;
  }
  const __m512i k512 = Broadcast(kFold512Hi, kFold512Lo);
  __m512i z = Fold4(z0, k512, z1);
  z = Fold4(z, k512, z2);
  z = Fold4(z, k512, z3);
  while (n >= 64) {
    z = Fold4(z, k512, Load4(p));
    p += 64;
    n -= 64;
  }
  // Lane i (lowest address first) lies (3 - i) * 128 bits before the last.
  __m128i x = _mm512_extracti32x4_epi32(z, 3);
  x = _mm_xor_si128(
      x, Carry(_mm512_extracti32x4_epi32(z, 2), kFold128Hi, kFold128Lo));
  x = _mm_xor_si128(
      x, Carry(_mm512_extracti32x4_epi32(z, 1), kFold256Hi, kFold256Lo));
  x = _mm_xor_si128(x,
                    Carry(_mm512_castsi512_si128(z), kFold384Hi, kFold384Lo));
  return Finish(x, p, n);
}
#endif  // LOCKSTEP_CRC_CLMUL

// CRC-32C's byte table.
std::array<uint32_t, 256> MakeCrc32cTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
    table[i] = c;
  }
  return table;
}

}  // namespace

uint32_t Crc32Update(uint32_t crc, std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  uint64_t n = data.size();
#ifdef LOCKSTEP_CRC_CLMUL
  const CpuLevel level = Crc32Level();
  if (n >= 256 && level == CpuLevel::kAvx512) {
    uint64_t bulk = n & ~uint64_t{15};
    crc = ~VclmulState(~crc, p, bulk);
    p += bulk;
    n -= bulk;
  } else if (n >= 64 && level != CpuLevel::kPortable) {
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

CpuLevel Crc32Level() {
#ifdef LOCKSTEP_CRC_CLMUL
  if (CpuLevelActive(CpuLevel::kAvx512)) return CpuLevel::kAvx512;
  if (CpuLevelActive(CpuLevel::kAvx2)) return CpuLevel::kAvx2;
#endif
  return CpuLevel::kPortable;
}

uint32_t Crc32(std::string_view data) { return Crc32Update(0, data); }

uint32_t Crc32c(std::string_view data, uint32_t crc) {
  static const std::array<uint32_t, 256> kTable = MakeCrc32cTable();
  crc = ~crc;
  for (char ch : data) {
    crc = kTable[(crc ^ static_cast<unsigned char>(ch)) & 0xff] ^ (crc >> 8);
  }
  return ~crc;
}

}  // namespace lockstep
