// The CPU model of the probe's CUDA CRC-32 kernel (numerics/crc32_tree.h):
// the same parts, block trees and final merge as src/torch/cuda/
// device_crc.cu, run in a loop, against zlib's crc32 (and lockstep's
// Crc32) on every length up to 600 bytes, random lengths up to 3 MB, every
// start alignment and several grid limits.
#include "lockstep/numerics/crc32_tree.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "lockstep/format/crc32.h"

namespace lockstep {
namespace {

using namespace crc32_tree;

const uint32_t* Tables() {
  static const std::vector<uint32_t>* t = [] {
    auto* v = new std::vector<uint32_t>(kSlices * 256);
    FillTables(v->data());
    return v;
  }();
  return t->data();
}

// A tree merge of kThreads values, each `shift` long, in place; returns the
// shift of the whole (kThreads values).
uint32_t TreeMerge(uint32_t* v, uint32_t shift) {
  for (int width = 1; width < kThreads; width *= 2) {
    for (int i = 0; i < kThreads; i += 2 * width) {
      v[i] = MergePair(v[i], v[i + width], shift);
    }
    shift = MulMod(shift, shift);
  }
  return shift;
}

// What the kernel computes, in the kernel's order.
uint32_t Model(const uint8_t* data, int64_t n, int max_blocks,
               int64_t min_part) {
  const uint32_t* table = Tables();
  Layout l = PlanLayout(n, max_blocks, min_part);
  EXPECT_EQ(l.part % kSlices, 0);
  EXPECT_GE(l.pad, 0);
  EXPECT_LT(l.pad, static_cast<int64_t>(l.blocks) * kThreads * l.part + 1);
  std::vector<uint32_t> blocks(l.blocks);
  const uint32_t part_shift = XPow8n(l.part);
  uint32_t block_shift = 0;
  for (int b = 0; b < l.blocks; ++b) {
    uint32_t v[kThreads];
    for (int t = 0; t < kThreads; ++t) {
      v[t] = PartRaw(l, data, static_cast<int64_t>(b) * kThreads + t, table);
    }
    block_shift = TreeMerge(v, part_shift);
    blocks[b] = v[0];
  }
  uint32_t raw = blocks[0];
  if (l.blocks > 1) {
    const int q = (l.blocks + kThreads - 1) / kThreads;
    const int missing = q * kThreads - l.blocks;
    uint32_t v[kThreads];
    for (int t = 0; t < kThreads; ++t) {
      uint32_t r = 0;
      for (int j = 0; j < q; ++j) {
        int idx = t * q + j - missing;
        r = MergePair(r, idx >= 0 ? blocks[idx] : 0, block_shift);
      }
      v[t] = r;
    }
    TreeMerge(v, XPow8n(static_cast<uint64_t>(l.part) * kThreads * q));
    raw = v[0];
  }
  return Finish(raw, n);
}

uint32_t Zlib(const uint8_t* data, int64_t n) {
  return static_cast<uint32_t>(crc32(0L, data, static_cast<uInt>(n)));
}

std::vector<uint8_t> RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> v(n + 32);
  for (auto& b : v) b = static_cast<uint8_t>(gen());
  return v;
}

TEST(Crc32TreeTest, MulModAndPowersAreThePolynomialArithmetic) {
  // x^0 is the identity; x^8 shifts a register past one zero byte.
  EXPECT_EQ(MulMod(kOne, 0x12345678u), 0x12345678u);
  EXPECT_EQ(MulMod(0x12345678u, kOne), 0x12345678u);
  const uint32_t* table = Tables();
  for (uint32_t r : {1u, 0xdeadbeefu, 0xFFFFFFFFu}) {
    uint8_t zeros[37] = {};
    EXPECT_EQ(RawUpdate(r, zeros, 37, table), MulMod(r, XPow8n(37)));
  }
  EXPECT_EQ(XPow8n(0), kOne);
  EXPECT_EQ(XPow8n(5), MulMod(XPow8n(2), XPow8n(3)));
}

TEST(Crc32TreeTest, RawUpdateMatchesZlibAtEveryAlignment) {
  std::vector<uint8_t> buf = RandomBytes(4096, 1);
  for (int offset = 0; offset < 16; ++offset) {
    for (int64_t n : {0, 1, 15, 16, 17, 31, 32, 33, 1000, 4000}) {
      const uint8_t* d = buf.data() + offset;
      EXPECT_EQ(Finish(RawUpdate(0, d, n, Tables()), n), Zlib(d, n))
          << "offset " << offset << " n " << n;
    }
  }
}

TEST(Crc32TreeTest, ModelMatchesZlibOnEveryShortLength) {
  std::vector<uint8_t> buf = RandomBytes(700, 2);
  for (int64_t n = 0; n <= 600; ++n) {
    for (int offset : {0, 3}) {
      const uint8_t* d = buf.data() + offset;
      // min_part 16 makes several blocks of short parts from few bytes.
      ASSERT_EQ(Model(d, n, 7, 16), Zlib(d, n)) << n << " @" << offset;
      ASSERT_EQ(Model(d, n, 528, 256), Zlib(d, n)) << n << " @" << offset;
    }
  }
}

TEST(Crc32TreeTest, ModelMatchesZlibOnRandomLengthsAndGrids) {
  std::mt19937_64 gen(3);
  std::vector<uint8_t> buf = RandomBytes(3 << 20, 4);
  for (int trial = 0; trial < 40; ++trial) {
    int64_t n = static_cast<int64_t>(gen() % (3 << 20));
    int offset = static_cast<int>(gen() % 16);
    int max_blocks = std::vector<int>{1, 2, 3, 255, 256, 257, 528}[trial % 7];
    const uint8_t* d = buf.data() + offset;
    ASSERT_EQ(Model(d, n, max_blocks, 256), Zlib(d, n))
        << "n " << n << " offset " << offset << " blocks " << max_blocks;
    EXPECT_EQ(Zlib(d, n),
              Crc32(std::string_view(reinterpret_cast<const char*>(d), n)));
  }
}

TEST(Crc32TreeTest, LayoutCoversEveryByteOnce) {
  for (int64_t n : {1, 16, 4095, 65536, 1000003}) {
    for (int max_blocks : {1, 5, 528}) {
      Layout l = PlanLayout(n, max_blocks);
      EXPECT_LE(l.blocks, max_blocks);
      EXPECT_EQ(static_cast<int64_t>(l.blocks) * kThreads * l.part, n + l.pad);
      EXPECT_LT(l.pad, static_cast<int64_t>(l.blocks) * kThreads * kSlices +
                           l.blocks * kThreads)
          << "padding is less than a part per thread";
    }
  }
}

}  // namespace
}  // namespace lockstep
