// CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, initial and final XOR
// 0xFFFFFFFF, the checksum of zlib and msprobe's "md5" column) of a buffer
// cut into equal parts that are checked apart (a GPU thread each) and merged
// by polynomial arithmetic: the probe's CUDA kernel (src/torch/cuda/) and
// its CPU model in tests share these functions.
//
// Arithmetic. In the reflected form bit 31 - i holds the coefficient of
// x^i. Raw(s, M), the register after M from register s (no XORs), is linear:
//   Raw(s, M) = Raw(0, M) ^ s * x^(8|M|)  (mod P)
// so Raw(0, A + B) = Raw(0, A) * x^(8|B|) ^ Raw(0, B), and leading zero
// bytes leave Raw(0, .) unchanged: a buffer is padded in front, virtually,
// to G * kThreads * T bytes, so that every part has the same length T and
// every merge the same shift. CRC-32(M) = ~(Raw(0, M) ^ ~0 * x^(8|M|)).
//
// Layout: part g (thread g % kThreads of block g / kThreads) covers padded
// bytes [g T, (g + 1) T); a block merges its kThreads parts in a tree; the
// blocks' results are merged likewise, padded in front with zero results to
// a multiple of kThreads.
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_CRC32_TREE_H_
#define LOCKSTEP_NUMERICS_CRC32_TREE_H_

#include <cstdint>

#if defined(__CUDACC__)
#define LOCKSTEP_HD __host__ __device__ __forceinline__
#else
#define LOCKSTEP_HD inline
#endif

namespace lockstep::crc32_tree {

inline constexpr uint32_t kPoly = 0xEDB88320u;
inline constexpr uint32_t kOne = 0x80000000u;  // x^0
inline constexpr int kThreads = 256;           // parts per block
inline constexpr int kSlices = 16;             // bytes per table step

// a * b mod P.
LOCKSTEP_HD uint32_t MulMod(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (int i = 0; i < 32; ++i) {
    if (a & 0x80000000u) p ^= b;
    a <<= 1;
    b = (b & 1u) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

// x^(8 n) mod P: the shift of a register past n zero bytes.
LOCKSTEP_HD uint32_t XPow8n(uint64_t n) {
  uint32_t result = kOne;
  uint32_t base = kOne >> 8;  // x^8
  while (n != 0) {
    if (n & 1u) result = MulMod(result, base);
    base = MulMod(base, base);
    n >>= 1;
  }
  return result;
}

// The slicing tables: table[k * 256 + b] = Raw(0, byte b then k zero
// bytes), k < kSlices.
LOCKSTEP_HD void FillTables(uint32_t* table) {
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t r = b;
    for (int i = 0; i < 8; ++i) r = (r & 1u) ? (r >> 1) ^ kPoly : r >> 1;
    table[b] = r;
  }
  for (int k = 1; k < kSlices; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t prev = table[(k - 1) * 256 + b];
      table[k * 256 + b] = (prev >> 8) ^ table[prev & 0xffu];
    }
  }
}

// Raw(r, data[0, n)) with the tables: bytes one at a time up to a 16-byte
// boundary, then 16 at a time, then the rest one at a time.
LOCKSTEP_HD uint32_t RawUpdate(uint32_t r, const uint8_t* data, int64_t n,
                               const uint32_t* table) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(data) & 15u) != 0) {
    r = (r >> 8) ^ table[(r ^ *data++) & 0xffu];
    --n;
  }
  for (; n >= kSlices; n -= kSlices, data += kSlices) {
#if defined(__CUDA_ARCH__)
    const uint4 q = *reinterpret_cast<const uint4*>(data);  // one load
    uint32_t w0 = q.x ^ r, w1 = q.y, w2 = q.z, w3 = q.w;
#else
    const uint32_t* w = reinterpret_cast<const uint32_t*>(data);
    uint32_t w0 = w[0] ^ r, w1 = w[1], w2 = w[2], w3 = w[3];
#endif
    r = table[15 * 256 + (w0 & 0xffu)] ^ table[14 * 256 + ((w0 >> 8) & 0xffu)] ^
        table[13 * 256 + ((w0 >> 16) & 0xffu)] ^ table[12 * 256 + (w0 >> 24)] ^
        table[11 * 256 + (w1 & 0xffu)] ^ table[10 * 256 + ((w1 >> 8) & 0xffu)] ^
        table[9 * 256 + ((w1 >> 16) & 0xffu)] ^ table[8 * 256 + (w1 >> 24)] ^
        table[7 * 256 + (w2 & 0xffu)] ^ table[6 * 256 + ((w2 >> 8) & 0xffu)] ^
        table[5 * 256 + ((w2 >> 16) & 0xffu)] ^ table[4 * 256 + (w2 >> 24)] ^
        table[3 * 256 + (w3 & 0xffu)] ^ table[2 * 256 + ((w3 >> 8) & 0xffu)] ^
        table[1 * 256 + ((w3 >> 16) & 0xffu)] ^ table[w3 >> 24];
  }
  while (n-- > 0) r = (r >> 8) ^ table[(r ^ *data++) & 0xffu];
  return r;
}

// How a buffer of n bytes is cut: `blocks` blocks of kThreads parts of
// `part` bytes (a multiple of 16), `pad` virtual zero bytes in front.
struct Layout {
  int64_t n = 0;
  int blocks = 1;
  int64_t part = kSlices;
  int64_t pad = 0;
};

// At most max_blocks blocks, parts of at least min_part bytes.
LOCKSTEP_HD Layout PlanLayout(int64_t n, int max_blocks,
                              int64_t min_part = 256) {
  Layout l;
  l.n = n;
  int64_t blocks = (n + kThreads * min_part - 1) / (kThreads * min_part);
  if (blocks < 1) blocks = 1;
  if (blocks > max_blocks) blocks = max_blocks;
  l.blocks = static_cast<int>(blocks);
  int64_t parts = blocks * kThreads;
  int64_t part = (n + parts - 1) / parts;
  l.part = (part + kSlices - 1) / kSlices * kSlices;
  if (l.part == 0) l.part = kSlices;
  l.pad = parts * l.part - n;
  return l;
}

// Raw(0, .) of part g of `data` (n = l.n bytes): its real bytes only (the
// padding in front is zeros).
LOCKSTEP_HD uint32_t PartRaw(const Layout& l, const uint8_t* data, int64_t g,
                             const uint32_t* table) {
  int64_t lo = g * l.part - l.pad;
  int64_t hi = lo + l.part;
  if (lo < 0) lo = 0;
  if (hi <= lo) return 0;
  return RawUpdate(0, data + lo, hi - lo, table);
}

// One level of the merge tree over v[0, kThreads): the value at i (a
// multiple of 2 * width) takes in the one at i + width; `shift` is
// x^(8 * length of one width-wide group). Called by thread i.
LOCKSTEP_HD uint32_t MergePair(uint32_t left, uint32_t right, uint32_t shift) {
  return MulMod(left, shift) ^ right;
}

// CRC-32 from Raw(0, M) and |M|.
LOCKSTEP_HD uint32_t Finish(uint32_t raw, uint64_t n) {
  return ~(raw ^ MulMod(0xFFFFFFFFu, XPow8n(n)));
}

}  // namespace lockstep::crc32_tree

#endif  // LOCKSTEP_NUMERICS_CRC32_TREE_H_
