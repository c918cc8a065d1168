#include "lockstep/numerics/pyfloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace lockstep {
namespace {

// Expected strings are Python 3's repr() of the same doubles.
TEST(PyFloatTest, ReprMatchesPython) {
  EXPECT_EQ(PyFloatRepr(1.0), "1.0");
  EXPECT_EQ(PyFloatRepr(0.0), "0.0");
  EXPECT_EQ(PyFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(PyFloatRepr(100.0), "100.0");
  EXPECT_EQ(PyFloatRepr(0.1), "0.1");
  EXPECT_EQ(PyFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PyFloatRepr(0.00001), "1e-05");
  EXPECT_EQ(PyFloatRepr(1.66445970536111e-05), "1.66445970536111e-05");
  EXPECT_EQ(PyFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PyFloatRepr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(PyFloatRepr(1.5e300), "1.5e+300");
  EXPECT_EQ(PyFloatRepr(5e-324), "5e-324");
  EXPECT_EQ(PyFloatRepr(2.567232847213745), "2.567232847213745");
  EXPECT_EQ(PyFloatRepr(-0.0004655122756958008), "-0.0004655122756958008");
  EXPECT_EQ(PyFloatRepr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(PyFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(PyFloatRepr(std::nan("")), "nan");
}

TEST(PyFloatTest, RoundTo12Decimals) {
  EXPECT_EQ(RoundTo12Decimals(1.1920928955078125e-07), 1.19209e-07);
  EXPECT_EQ(PyFloatRepr(RoundTo12Decimals(1.1920928955078125e-07)),
            "1.19209e-07");
  EXPECT_EQ(RoundTo12Decimals(0.0004655122756958008), 0.000465512276);
  EXPECT_EQ(RoundTo12Decimals(1e-13), 0.0);
  EXPECT_TRUE(std::isnan(RoundTo12Decimals(std::nan(""))));
}

}  // namespace
}  // namespace lockstep
