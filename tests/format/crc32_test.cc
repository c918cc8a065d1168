// The carry-less-multiply CRC-32 paths against zlib's crc32 (the
// reference): every length 0..1100 at every alignment 0..15, random and
// all-ones data, long buffers, chained updates and combined chunks.
#include "lockstep/format/crc32.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

#include "testing/cpu_levels.h"

namespace lockstep {
namespace {

uint32_t Reference(std::string_view s) {
  return static_cast<uint32_t>(crc32(0,
                                     reinterpret_cast<const Bytef*>(s.data()),
                                     static_cast<uInt>(s.size())));
}

std::string Random(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Crc32Test, KnownValue) {
  EXPECT_EQ(Crc32("123456789"), 0xcbf43926u);  // the CRC-32 check value
  EXPECT_EQ(Crc32(""), 0u);
}

// Every path the CPU has (zlib, PCLMULQDQ, VPCLMULQDQ), each against zlib's
// reference.
TEST(Crc32Test, EveryLengthAndAlignmentMatchesZlibOnEveryPath) {
  std::string buf = Random(1100 + 16, 7);
  std::string ones(1100 + 16, '\xff');
  testing::ForEachCpuLevel([&](CpuLevel level) {
    ASSERT_EQ(Crc32Level(), level);
    for (size_t align = 0; align < 16; ++align) {
      for (size_t n = 0; n + align <= 1100; ++n) {
        std::string_view a(buf.data() + align, n), b(ones.data() + align, n);
        ASSERT_EQ(Crc32(a), Reference(a)) << "n=" << n << " align=" << align;
        ASSERT_EQ(Crc32(b), Reference(b)) << "n=" << n << " align=" << align;
      }
    }
  });
}

TEST(Crc32Test, LongBuffersAndChainedUpdatesMatchZlibOnEveryPath) {
  std::string buf = Random((3 << 20) + 13, 11);
  testing::ForEachCpuLevel([&](CpuLevel) {
    EXPECT_EQ(Crc32(buf), Reference(buf));
    // Any split, each part continued from the last.
    for (size_t cut : {1u, 15u, 63u, 64u, 65u, 255u, 256u, 4096u, 1000003u}) {
      uint32_t c = Crc32Update(0, std::string_view(buf).substr(0, cut));
      c = Crc32Update(c, std::string_view(buf).substr(cut));
      EXPECT_EQ(c, Reference(buf)) << cut;
    }
  });
}

TEST(Crc32Test, CombinedChunksEqualTheWhole) {
  std::string buf = Random(1 << 20, 3);
  uint32_t total = 0;
  for (size_t at = 0; at < buf.size(); at += 100000) {
    std::string_view part = std::string_view(buf).substr(at, 100000);
    total = Crc32Combine(total, Crc32(part), part.size());
  }
  EXPECT_EQ(total, Reference(buf));
}

}  // namespace
}  // namespace lockstep
