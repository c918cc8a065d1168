#include "lockstep/numerics/half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "testing/cpu_levels.h"

namespace lockstep {
namespace {

// Independent decoders: sign * significand * 2^exp built with ldexp in
// double, from the format definitions (bias 15 / 127, 10 / 7 mantissa bits).
double RefDecode(uint16_t bits, int exp_bits, int man_bits) {
  int bias = (1 << (exp_bits - 1)) - 1;
  int e = (bits >> man_bits) & ((1 << exp_bits) - 1);
  int m = bits & ((1 << man_bits) - 1);
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (e == (1 << exp_bits) - 1) {
    return m ? std::numeric_limits<double>::quiet_NaN()
             : sign * std::numeric_limits<double>::infinity();
  }
  if (e == 0) return sign * std::ldexp(m, 1 - bias - man_bits);
  return sign * std::ldexp((1 << man_bits) + m, e - bias - man_bits);
}
double RefHalf(uint16_t h) { return RefDecode(h, 5, 10); }
double RefBf16(uint16_t b) { return RefDecode(b, 8, 7); }

uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }

TEST(HalfTest, HalfToFloatExhaustive) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    float f = HalfToFloat(h);
    double ref = RefHalf(h);
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << "h=" << std::hex << i;
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(f)) << "h=" << std::hex << i;
      // Payload kept in the high mantissa bits, quiet bit set.
      ASSERT_EQ((Bits(f) >> 13) & 0x3ffu, (h & 0x3ffu) | 0x200u)
          << "h=" << std::hex << i;
    } else {
      ASSERT_EQ(static_cast<double>(f), ref) << "h=" << std::hex << i;
    }
  }
}

TEST(HalfTest, BFloat16ToFloatExhaustive) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t b = static_cast<uint16_t>(i);
    float f = BFloat16ToFloat(b);
    double ref = RefBf16(b);
    ASSERT_EQ(Bits(f), i << 16)
        << "b=" << std::hex << i;  // exact bits, NaN too
    if (!std::isnan(ref)) {
      ASSERT_EQ(static_cast<double>(f), ref) << "b=" << std::hex << i;
    }
  }
}

TEST(HalfTest, RoundTripExhaustive) {
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t h = static_cast<uint16_t>(i);
    bool nan_h = std::isnan(RefHalf(h));
    ASSERT_EQ(FloatToHalf(HalfToFloat(h)), nan_h ? (h | 0x200) : h)
        << std::hex << i;
    bool nan_b = std::isnan(RefBf16(h));
    ASSERT_EQ(FloatToBFloat16(BFloat16ToFloat(h)), nan_b ? (h | 0x40) : h)
        << std::hex << i;
  }
}

// Round-to-nearest-even reference for narrowing: the nearest of all finite
// non-negative 16-bit values (decoded with RefDecode), ties to the even
// pattern, and infinity from the midpoint between the max and the next
// power of two upwards. Works in double, where every float is exact.
class NarrowRef {
 public:
  NarrowRef(double (*decode)(uint16_t), double overflow_midpoint)
      : overflow_(overflow_midpoint) {
    for (uint32_t i = 0; i < 0x8000; ++i) {
      double v = decode(static_cast<uint16_t>(i));
      if (std::isfinite(v)) values_.push_back({v, static_cast<uint16_t>(i)});
    }
    std::sort(values_.begin(), values_.end(),
              [](const Entry& a, const Entry& b) { return a.value < b.value; });
    inf_bits_ = static_cast<uint16_t>(values_.back().bits + 1);
  }

  uint16_t operator()(float f) const {
    uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    double x = std::fabs(static_cast<double>(f));
    if (x >= overflow_) return sign | inf_bits_;
    auto it =
        std::lower_bound(values_.begin(), values_.end(), x,
                         [](const Entry& e, double v) { return e.value < v; });
    if (it == values_.end())
      return sign | values_.back().bits;  // below overflow_
    if (it->value == x) return sign | it->bits;
    auto lo = it - 1;
    double dlo = x - lo->value, dhi = it->value - x;
    if (dlo < dhi) return sign | lo->bits;
    if (dhi < dlo) return sign | it->bits;
    return sign | ((lo->bits & 1) ? it->bits : lo->bits);
  }

 private:
  struct Entry {
    double value;
    uint16_t bits;
  };
  std::vector<Entry> values_;
  double overflow_;
  uint16_t inf_bits_ = 0;
};

const NarrowRef& HalfRef() {
  static const NarrowRef ref(RefHalf, 65520.0);
  return ref;
}
const NarrowRef& Bf16Ref() {
  static const NarrowRef ref(RefBf16,
                             std::ldexp(2.0 - std::ldexp(1.0, -8), 127));
  return ref;
}

void ExpectNarrow(float f) {
  ASSERT_EQ(FloatToHalf(f), HalfRef()(f))
      << "f=" << f << " bits=" << std::hex << Bits(f);
  ASSERT_EQ(FloatToBFloat16(f), Bf16Ref()(f))
      << "f=" << f << " bits=" << std::hex << Bits(f);
}

// Every midpoint between adjacent 16-bit values (a tie: must go to even)
// and the floats one ulp either side of it.
void CheckTies(double (*decode)(uint16_t), uint16_t (*narrow)(float),
               uint32_t max_finite) {
  for (uint32_t i = 0; i < max_finite; ++i) {
    for (uint32_t sign : {0u, 0x8000u}) {
      double lo = decode(static_cast<uint16_t>(i | sign));
      double hi = decode(static_cast<uint16_t>((i + 1) | sign));
      float mid = static_cast<float>((lo + hi) / 2);
      ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);  // exact in float
      uint16_t even = static_cast<uint16_t>(((i & 1) ? i + 1 : i) | sign);
      ASSERT_EQ(narrow(mid), even) << "tie above " << std::hex << i;
      float toward_lo = std::nextafter(mid, static_cast<float>(lo));
      float toward_hi = std::nextafter(mid, static_cast<float>(hi));
      ASSERT_EQ(narrow(toward_lo), i | sign) << "below mid " << std::hex << i;
      ASSERT_EQ(narrow(toward_hi), (i + 1) | sign)
          << "above mid " << std::hex << i;
    }
  }
}

TEST(HalfTest, FloatToHalfTiesAndNeighbours) {
  CheckTies(RefHalf, FloatToHalf, 0x7bff);
}
TEST(HalfTest, FloatToBFloat16TiesAndNeighbours) {
  CheckTies(RefBf16, FloatToBFloat16, 0x7f7f);
}

TEST(HalfTest, NarrowBoundaries) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float f :
       {0.0f, -0.0f, 65504.0f, 65519.996f, 65520.0f, -65520.0f, 1e9f, inf, -inf,
        std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), std::ldexp(1.0f, -25),
        std::nextafter(std::ldexp(1.0f, -25), 1.0f), std::ldexp(1.0f, -26),
        std::numeric_limits<float>::denorm_min(),
        std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
        3.3895313892515355e38f}) {
    ExpectNarrow(f);
  }
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(FloatToHalf(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(FloatToBFloat16(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(HalfTest, NarrowNaNStaysNaN) {
  for (uint32_t payload : {1u, 0x2000u, 0x400000u, 0x7fffffu}) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      float nan = std::bit_cast<float>(sign | 0x7f800000u | payload);
      uint16_t h = FloatToHalf(nan), b = FloatToBFloat16(nan);
      EXPECT_TRUE(std::isnan(HalfToFloat(h))) << std::hex << payload;
      EXPECT_TRUE(std::isnan(BFloat16ToFloat(b))) << std::hex << payload;
      EXPECT_EQ(h & 0x8000, sign >> 16);
      EXPECT_EQ(b & 0x8000, sign >> 16);
    }
  }
}

// Dense sweep over all float patterns with a prime stride (~16.7M values).
TEST(HalfTest, NarrowDenseSweep) {
  for (uint64_t x = 0; x < (1ull << 32); x += 257) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(x));
    if (std::isnan(f)) continue;
    ExpectNarrow(f);
  }
}

TEST(HalfTest, BatchMatchesScalarAllPatternsMisaligned) {
  std::vector<uint16_t> all(65536 + 1);
  for (uint32_t i = 0; i < 65536; ++i) all[i + 1] = static_cast<uint16_t>(i);
  std::vector<float> out(65536 + 1), port(65536 + 1);
  // The dispatched batch on every kernel path, the portable loop directly.
  testing::ForEachCpuLevel([&](CpuLevel level) {
    EXPECT_EQ(internal::HalfBatchUsesF16C(), level != CpuLevel::kPortable);
    for (int which = 0; which < 2; ++which) {
      // Offset by one element so neither pointer is 16-byte aligned.
      const uint16_t* in = all.data() + 1;
      if (which == 0) {
        HalfToFloat(in, out.data() + 1, 65536);
        internal::HalfToFloatPortable(in, port.data() + 1, 65536);
      } else {
        BFloat16ToFloat(in, out.data() + 1, 65536);
        internal::BFloat16ToFloatPortable(in, port.data() + 1, 65536);
      }
      for (uint32_t i = 0; i < 65536; ++i) {
        float s = which == 0 ? HalfToFloat(in[i]) : BFloat16ToFloat(in[i]);
        ASSERT_EQ(Bits(out[i + 1]), Bits(s))
            << "which=" << which << " i=" << std::hex << i;
        ASSERT_EQ(Bits(port[i + 1]), Bits(s))
            << "which=" << which << " i=" << std::hex << i;
      }
    }
  });
}

TEST(HalfTest, BatchTailsAndZeroLength) {
  std::vector<uint16_t> in(40);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<uint16_t>(0x3c00 + 37 * i);
  for (size_t n = 0; n <= 33; ++n) {
    std::vector<float> out(n + 1, -7.0f);
    HalfToFloat(in.data(), out.data(), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(out[i], HalfToFloat(in[i])) << n << " " << i;
    ASSERT_EQ(out[n], -7.0f) << "wrote past the end, n=" << n;
    BFloat16ToFloat(in.data(), out.data(), n);
    for (size_t i = 0; i < n; ++i)
      ASSERT_EQ(out[i], BFloat16ToFloat(in[i])) << n << " " << i;
    ASSERT_EQ(out[n], -7.0f) << "wrote past the end, n=" << n;
  }
  std::printf("F16C batch path: %s\n",
              internal::HalfBatchUsesF16C() ? "yes" : "no");
}

}  // namespace
}  // namespace lockstep
