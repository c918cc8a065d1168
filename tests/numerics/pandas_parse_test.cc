#include "lockstep/numerics/pandas_parse.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

// pandas 1.5.3: pd.to_numeric(pd.Series(['0.15361405909061432']))[0] is
// 0.1536140590906143 (docs/msprobe_reference.md §3.6): the 18th significant
// digit (counting the leading zero) is dropped.
TEST(PandasParseTest, DropsDigitsPastSeventeen) {
  EXPECT_EQ(*PandasParseFloat("0.15361405909061432"), 0.1536140590906143);
  EXPECT_NE(*PandasParseFloat("0.15361405909061432"), 0.15361405909061432);
}

TEST(PandasParseTest, ShortNumbersAreExact) {
  for (const char* s : {"1.0", "-2.5", "0.1", "100", "1e-05",
                        "1.66445970536111e-05", "6.0", "  7 "}) {
    auto v = PandasParseFloat(s);
    ASSERT_TRUE(v.has_value()) << s;
    EXPECT_EQ(*v, std::strtod(s, nullptr)) << s;
  }
}

// 17 digits exceed 2^53, so the accumulated integer is rounded before the
// power of ten is applied: not the correctly rounded double.
TEST(PandasParseTest, SeventeenDigitMantissaIsRounded) {
  double v = *PandasParseFloat("3.4028234663852886e+38");
  EXPECT_NE(v, 3.4028234663852886e+38);
  EXPECT_NEAR(v, 3.4028234663852886e+38, 3.4028234663852886e+38 * 4e-16);
}

TEST(PandasParseTest, RejectsNonNumbers) {
  for (const char* s : {"", "abc", "1.0x", "True", ".", "-", "e5", "N/A"}) {
    EXPECT_FALSE(PandasParseFloat(s).has_value()) << s;
  }
}

TEST(PandasParseTest, RangeEdges) {
  EXPECT_TRUE(std::isinf(*PandasParseFloat("1e400")));
  EXPECT_EQ(*PandasParseFloat("1e-700"), 0.0);
  EXPECT_GT(*PandasParseFloat("4e-320"), 0.0);  // subnormal path
  EXPECT_FALSE(
      PandasParseFloat("1e").has_value());  // 'e' without digits is left over
}

}  // namespace
}  // namespace lockstep
