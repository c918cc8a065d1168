#include "lockstep/compare/align.h"

#include <gtest/gtest.h>

#include <random>

namespace lockstep {
namespace {

using Pairs = std::vector<std::pair<size_t, size_t>>;

// Length of the longest common subsequence, by plain DP (the reference).
size_t LcsLength(const std::vector<std::string>& a,
                 const std::vector<std::string>& b) {
  std::vector<std::vector<size_t>> t(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1
                                     : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

void ExpectValidLcs(const std::vector<std::string>& a,
                    const std::vector<std::string>& b, const Pairs& p) {
  for (size_t k = 0; k < p.size(); ++k) {
    ASSERT_LT(p[k].first, a.size());
    ASSERT_LT(p[k].second, b.size());
    EXPECT_EQ(a[p[k].first], b[p[k].second]);
    if (k) {
      EXPECT_LT(p[k - 1].first, p[k].first);
      EXPECT_LT(p[k - 1].second, p[k].second);
    }
  }
  EXPECT_EQ(p.size(), LcsLength(a, b));
}

TEST(AlignTest, InsertedAndMissing) {
  std::vector<std::string> a = {"conv", "relu", "jit_fn", "linear", "softmax"};
  std::vector<std::string> b = {"conv", "relu", "linear", "dropout", "softmax"};
  Pairs p;
  ASSERT_TRUE(AlignSequences(a, b, 100, &p));
  EXPECT_EQ(p, (Pairs{{0, 0}, {1, 1}, {3, 2}, {4, 4}}));
}

TEST(AlignTest, EmptyAndIdentical) {
  Pairs p;
  ASSERT_TRUE(AlignSequences({}, {}, 10, &p));
  EXPECT_TRUE(p.empty());
  ASSERT_TRUE(AlignSequences({"x"}, {}, 10, &p));
  EXPECT_TRUE(p.empty());
  ASSERT_TRUE(AlignSequences({"x", "y"}, {"x", "y"}, 0, &p));
  EXPECT_EQ(p, (Pairs{{0, 0}, {1, 1}}));
}

TEST(AlignTest, GivesUpPastMaxEdits) {
  Pairs p;
  EXPECT_FALSE(AlignSequences({"a", "b", "c"}, {"x", "y", "z"}, 2, &p));
  EXPECT_TRUE(AlignSequences({"a", "b", "c"}, {"x", "y", "z"}, 6, &p));
  EXPECT_TRUE(p.empty());
}

TEST(AlignTest, RandomAgainstDynamicProgramming) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> a, b;
    size_t na = rng() % 30, nb = rng() % 30;
    for (size_t i = 0; i < na; ++i)
      a.push_back(std::string(1, static_cast<char>('a' + rng() % 4)));
    for (size_t i = 0; i < nb; ++i)
      b.push_back(std::string(1, static_cast<char>('a' + rng() % 4)));
    Pairs p;
    ASSERT_TRUE(AlignSequences(a, b, 100, &p));
    ExpectValidLcs(a, b, p);
  }
}

OpRow Row(const std::string& entry, const std::string& io,
          const std::string& shape) {
  OpRow r;
  r.entry = entry;
  r.name = entry + "." + io;
  r.state = io.rfind("output", 0) == 0 ? RowState::kOutput : RowState::kInput;
  r.shape = shape;
  r.dtype = "torch.float32";
  return r;
}

TEST(AlignTest, JitFunctionDumpedOnOneSideOnly) {
  // Target ran an extra scripted op; later call indices shift by one.
  std::vector<OpRow> t = {
      Row("Functional.linear.0.forward", "input.0", "[2, 3]"),
      Row("Functional.linear.0.forward", "output.0", "[2, 4]"),
      Row("Torch.mul.0.forward", "input.0", "[2, 4]"),
      Row("Torch.mul.0.forward", "output.0", "[2, 4]"),
      Row("Functional.linear.1.forward", "input.0", "[2, 4]"),
      Row("Functional.linear.1.forward", "output.0", "[2, 2]")};
  std::vector<OpRow> b = {
      Row("Functional.linear.0.forward", "input.0", "[2, 3]"),
      Row("Functional.linear.0.forward", "output.0", "[2, 4]"),
      Row("Functional.linear.1.forward", "input.0", "[2, 4]"),
      Row("Functional.linear.1.forward", "output.0", "[2, 2]")};
  std::vector<AlignmentGap> gaps;
  std::vector<int> m = AlignRows(t, b, 0, -1, &gaps).value();
  EXPECT_EQ(m, (std::vector<int>{0, 1, -1, -1, 2, 3}));
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].entry, "Torch.mul.0.forward");
  EXPECT_TRUE(gaps[0].in_target);
}

TEST(AlignRowsTest, TooManyEditsIsNotAnAlignment) {
  // Two streams with nothing in common need one edit per entry: past
  // kMaxAlignEdits AlignRows gives up and adds no gaps (the comparator then
  // matches by name and lists what the target lacks).
  std::vector<OpRow> t, b;
  for (int i = 0; i < kMaxAlignEdits; ++i) {
    t.push_back(
        Row("Torch.a" + std::to_string(i) + ".0.forward", "input.0", "[1]"));
    b.push_back(
        Row("Torch.b" + std::to_string(i) + ".0.forward", "input.0", "[1]"));
  }
  for (size_t i = 0; i < t.size(); ++i) t[i].entry_index = b[i].entry_index = i;
  std::vector<AlignmentGap> gaps;
  EXPECT_FALSE(AlignRows(t, b, 0, -1, &gaps).has_value());
  EXPECT_TRUE(gaps.empty());
}

}  // namespace
}  // namespace lockstep
