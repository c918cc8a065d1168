#include "lockstep/compare/stats_diff.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

std::pair<std::string, std::string> D(const PyValue& a, const PyValue& b) {
  auto [d, r] = StatDiff(a, &b);
  return {d.ToCsv(), r.ToCsv()};
}

// Expected strings are msprobe HEAD's cells (fixtures/msprobe/toy/out_stat).
TEST(StatsDiffTest, NumbersAsMsprobePrintsThem) {
  auto [d, r] =
      D(PyValue::Float(1.462890625), PyValue::Float(1.4633561372756958));
  EXPECT_EQ(d, "-0.0004655122756958008");
  EXPECT_EQ(r, "0.031811277093656554%");
  EXPECT_EQ(D(PyValue::Float(2.5), PyValue::Float(2.5)),
            std::make_pair(std::string("0"), std::string("0")));
}

TEST(StatsDiffTest, SpecialValues) {
  const double nan = std::nan(""), inf = INFINITY;
  EXPECT_EQ(D(PyValue::Float(nan), PyValue::Float(1.0)).first, "Nan");
  EXPECT_EQ(D(PyValue::Float(1.0), PyValue::Float(nan)).second, "Nan");
  EXPECT_EQ(D(PyValue::Float(inf), PyValue::Float(1.0)).first, "inf");
  EXPECT_EQ(D(PyValue::Float(-inf), PyValue::Float(1.0)).first, "-inf");
  EXPECT_EQ(D(PyValue::Float(1.0), PyValue::Float(inf)).first, "-inf");
  EXPECT_EQ(D(PyValue::Float(1.0), PyValue::Float(-inf)).first, "inf");
  EXPECT_EQ(D(PyValue::Float(1.0), PyValue::Float(0.0)).second, "inf");
  EXPECT_EQ(D(PyValue(), PyValue()).first, "0");  // "None" == "None"
  EXPECT_EQ(D(PyValue(), PyValue::Float(1.0)).first, "Diff");
  EXPECT_EQ(D(PyValue::Str("cuda:0"), PyValue::Str("npu:0")).first, "N/A");
  EXPECT_EQ(StatDiff(PyValue::Float(1.0), nullptr).first.ToCsv(), "N/A");
}

TEST(StatsDiffTest, IntsAndBools) {
  EXPECT_EQ(D(PyValue::Int(3), PyValue::Int(2)).first, "1.0");
  EXPECT_EQ(D(PyValue::Bool(true), PyValue::Bool(false)).first, "Diff");
  EXPECT_EQ(D(PyValue::Bool(true), PyValue::Bool(true)).first, "0");
}

}  // namespace
}  // namespace lockstep
