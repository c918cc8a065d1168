#include "lockstep/compare/matching.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace lockstep {
namespace {

OpRow Row(const std::string& entry, const std::string& io,
          const std::string& dtype = "torch.float32") {
  OpRow r;
  r.entry = entry;
  r.name = entry + "." + io;
  r.dtype = dtype;
  return r;
}

TEST(MatchingTest, ExactNames) {
  std::vector<OpRow> t = {Row("Functional.linear.0.forward", "input.0"),
                          Row("Functional.relu.0.forward", "input.0")};
  std::vector<OpRow> b = {Row("Functional.relu.0.forward", "input.0"),
                          Row("Functional.linear.0.forward", "input.0")};
  EXPECT_EQ(MatchRows(t, b, {}), (std::vector<int>{1, 0}));
}

TEST(MatchingTest, BackwardCallIndicesRenumberedByOccurrence) {
  // Recomputation makes the target's backward indices 2 and 5; the baseline's
  // are 0 and 1. msprobe pairs them by occurrence.
  std::vector<OpRow> t = {Row("Functional.gelu.2.backward", "input.0"),
                          Row("Functional.gelu.5.backward", "input.0")};
  std::vector<OpRow> b = {Row("Functional.gelu.0.backward", "input.0"),
                          Row("Functional.gelu.1.backward", "input.0")};
  EXPECT_EQ(MatchRows(t, b, {}), (std::vector<int>{0, 1}));
  // Forward entries are not renumbered.
  std::vector<OpRow> tf = {Row("Functional.gelu.2.forward", "input.0")};
  std::vector<OpRow> bf = {Row("Functional.gelu.0.forward", "input.0")};
  EXPECT_EQ(MatchRows(tf, bf, {}), (std::vector<int>{-1}));
}

TEST(MatchingTest, DtypeGate) {
  std::vector<OpRow> t = {Row("A.x.0.forward", "input.0", "torch.float16"),
                          Row("A.x.0.forward", "input.1", "torch.float32"),
                          Row("A.x.0.forward", "input.2", "Float16")};
  std::vector<OpRow> b = {Row("A.x.0.forward", "input.0", "torch.float32"),
                          Row("A.x.0.forward", "input.1", "torch.int64"),
                          Row("A.x.0.forward", "input.2", "BFloat16")};
  EXPECT_EQ(MatchRows(t, b, {}), (std::vector<int>{0, -1, 2}));
}

// msprobe 26's groups (float64 among the floats) and its
// cross_dtype_mapping between a MindSpore and a PyTorch dump.
TEST(MatchingTest, DtypeGateAsMsprobe26) {
  EXPECT_TRUE(DTypesComparable("torch.float64", "torch.float32"));
  EXPECT_TRUE(DTypesComparable("Float64", "BFloat16"));
  EXPECT_FALSE(DTypesComparable("torch.int64", "torch.int32"));
  EXPECT_FALSE(DTypesComparable("torch.float32", "torch.int64"));
  EXPECT_TRUE(DTypesComparable("BFloat16", "torch.bfloat16"));
  EXPECT_TRUE(DTypesComparable("Float32", "torch.float16"));
  EXPECT_TRUE(DTypesComparable("Int32", "torch.int64"));
  EXPECT_TRUE(DTypesComparable("torch.bool", "Bool"));
  EXPECT_FALSE(DTypesComparable("Float32", "torch.int64"));
  EXPECT_FALSE(DTypesComparable("Int32", "Int64"));  // one framework
  EXPECT_FALSE(DTypesComparable("String", "torch.float32"));
}

// Twin row lists (the same names in the same order, the usual case) are
// paired row by row without hashing: the pairs must be those the merge by
// key gives. The merge runs when the baseline has one more row at its end,
// which pairs with nothing and moves no other pair.
TEST(MatchingTest, TwinListsPairAsTheMergeDoes) {
  std::mt19937 rng(11);
  const char* apis[] = {"Functional.gelu", "Torch.matmul", "Tensor.add"};
  const char* dtypes[] = {"torch.float32", "torch.bfloat16", "torch.int64"};
  for (int round = 0; round < 50; ++round) {
    std::vector<OpRow> t, b;
    int entries = 1 + static_cast<int>(rng() % 30);
    for (int e = 0; e < entries; ++e) {
      // Repeated and backward entries exercise the renumbering.
      std::string entry = std::string(apis[rng() % 3]) + "." +
                          std::to_string(rng() % 4) +
                          (rng() % 2 ? ".forward" : ".backward");
      for (int io = 0, n = 1 + static_cast<int>(rng() % 3); io < n; ++io) {
        std::string name = "input." + std::to_string(io);
        t.push_back(Row(entry, name, dtypes[rng() % 3]));
        b.push_back(Row(entry, name, dtypes[rng() % 3]));
      }
    }
    for (bool renumber : {false, true}) {
      MatchOptions o;
      o.renumber_params_grad = renumber;
      std::vector<int> twins = MatchRows(t, b, o);
      std::vector<OpRow> longer = b;
      longer.push_back(Row("Only.baseline.0.forward", "input.0"));
      ASSERT_EQ(twins, MatchRows(t, longer, o)) << round;
      for (size_t i = 0; i < t.size(); ++i)
        EXPECT_TRUE(twins[i] == -1 || twins[i] == static_cast<int>(i));
    }
  }
}

TEST(MatchingTest, FuzzyDropsCallIndices) {
  EXPECT_EQ(FuzzyName("Functional.conv2d.3.forward.input.0"),
            "Functional.conv2d.forward.input.0");
  EXPECT_EQ(FuzzyName("Module.conv1.Conv2d.forward.0.input.0"),
            "Module.conv1.Conv2d.forward.0.input.0");
  std::vector<OpRow> t = {Row("Functional.conv2d.7.forward", "input.0"),
                          Row("Functional.conv2d.8.forward", "input.0")};
  std::vector<OpRow> b = {Row("Functional.conv2d.0.forward", "input.0"),
                          Row("Functional.conv2d.1.forward", "input.0")};
  MatchOptions fuzzy;
  fuzzy.fuzzy = true;
  EXPECT_EQ(MatchRows(t, b, fuzzy), (std::vector<int>{0, 1}));
  EXPECT_EQ(MatchRows(t, b, {}), (std::vector<int>{-1, -1}));
}

TEST(MatchingTest, RenumberParamsGradAcrossSteps) {
  std::vector<OpRow> t = {Row("Module.fc.Linear.parameters_grad.1", "weight")};
  std::vector<OpRow> b = {Row("Module.fc.Linear.parameters_grad.0", "weight")};
  EXPECT_EQ(MatchRows(t, b, {}),
            (std::vector<int>{-1}));  // msprobe's behaviour
  MatchOptions o;
  o.renumber_params_grad = true;
  EXPECT_EQ(MatchRows(t, b, o), (std::vector<int>{0}));
}

}  // namespace
}  // namespace lockstep
