#include "lockstep/numerics/pyfloat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

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

// Differential: 20000 doubles (random bit patterns, and random values near
// the fixed/scientific switch points) against Python 3's repr, run as a
// subprocess. Exact match required.
TEST(PyFloatTest, ReprMatchesPythonOnRandomDoubles) {
  const char* python = "/usr/bin/python3";
  if (::access(python, X_OK) != 0) GTEST_SKIP() << "no " << python;
  std::mt19937_64 rng(20261121);
  std::vector<double> xs;
  while (xs.size() < 10000) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isnan(d)) xs.push_back(d);
  }
  std::uniform_real_distribution<double> mant(1.0, 10.0);
  for (int e : {-6, -5, -4, -3, 14, 15, 16, 17, 99, 100, -100, -101}) {
    for (int k = 0; k < 833; ++k) xs.push_back(mant(rng) * std::pow(10.0, e));
  }
  std::string dir = ::testing::TempDir();
  std::string in = dir + "/pyfloat_in.txt", out = dir + "/pyfloat_out.txt";
  {
    std::ofstream f(in);
    char buf[64];
    for (double x : xs) {
      std::snprintf(buf, sizeof buf, "%a\n", x);
      f << buf;
    }
  }
  std::string cmd = std::string(python) +
                    " -c 'import sys; [print(repr(float.fromhex(l))) for l "
                    "in open(sys.argv[1])]' " +
                    in + " > " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream f(out);
  std::string line;
  size_t i = 0, mismatches = 0;
  while (std::getline(f, line) && i < xs.size()) {
    if (PyFloatRepr(xs[i]) != line && ++mismatches <= 5) {
      ADD_FAILURE() << "x = " << line << ": lockstep " << PyFloatRepr(xs[i]);
    }
    ++i;
  }
  EXPECT_EQ(i, xs.size());
  EXPECT_EQ(mismatches, 0u);
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
