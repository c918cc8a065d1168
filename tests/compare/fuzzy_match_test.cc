#include "lockstep/compare/fuzzy_match.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "lockstep/compare/matching.h"

namespace lockstep {
namespace {

// One entry's rows: "input.0:[4, 8]" style specs, dtype float32 unless the
// spec ends with "@dtype".
std::vector<OpRow> Entry(const std::string& entry,
                         const std::vector<std::string>& specs,
                         size_t entry_index) {
  std::vector<OpRow> rows;
  for (const std::string& spec : specs) {
    OpRow r;
    r.entry = entry;
    r.entry_index = entry_index;
    size_t colon = spec.find(':'), at = spec.find('@');
    std::string io = spec.substr(0, colon);
    r.name = entry + "." + io;
    r.shape = spec.substr(colon + 1, at == std::string::npos ? std::string::npos
                                                             : at - colon - 1);
    r.dtype = at == std::string::npos ? "torch.float32" : spec.substr(at + 1);
    r.state = io.rfind("output", 0) == 0 ? RowState::kOutput : RowState::kInput;
    rows.push_back(r);
  }
  return rows;
}

// A dump from entries given as {name, specs}.
std::vector<OpRow> Dump(
    const std::vector<std::pair<std::string, std::vector<std::string>>>& es) {
  std::vector<OpRow> rows;
  for (size_t i = 0; i < es.size(); ++i) {
    std::vector<OpRow> e = Entry(es[i].first, es[i].second, i);
    rows.insert(rows.end(), e.begin(), e.end());
  }
  return rows;
}

const std::vector<std::string> kLinear = {"input.0:[4, 16, 32]",
                                          "input.1:[96, 32]", "input.2:[96]",
                                          "output.0:[4, 16, 96]"};
const std::vector<std::string> kSide = {"input.0:[4, 32]", "input.1:[8, 32]",
                                        "input.2:None", "output.0:[4, 8]"};
const std::vector<std::string> kRelu = {"input.0:[4, 16, 96]",
                                        "output.0:[4, 16, 96]"};

// msprobe 1.2.2's rule (structures checked).
std::vector<int> Rows122(const std::vector<OpRow>& t,
                         const std::vector<OpRow>& b) {
  return FuzzyMatchRows(t, b, FuzzyRule::kStructures);
}

TEST(FuzzyMatchTest, RenameApiAsMsprobe) {
  EXPECT_EQ(MsprobeRenameApi("Functional.conv2d.3.forward.input.0", "forward"),
            "Functional.conv2d.input.0");
  // Modules keep their index and lose their class (msprobe's rsplit).
  EXPECT_EQ(MsprobeRenameApi("Module.fc.Linear.forward.0.input.0", "forward"),
            "Module.fc.0.input.0");
  // Text after a second "forward" is dropped, as Python's split()[1] does.
  EXPECT_EQ(MsprobeRenameApi("A.b.0.forward.x_forward_y", "forward"),
            "A.b.x_");  // Python: "A.b.0.".rsplit(".", 2)[0] + ".x_"
  EXPECT_EQ(MsprobeRenameApi("x.forward.input", "forward"), "x.input");
  EXPECT_TRUE(FuzzyNamesMatch("Functional.relu.3.backward.input.0",
                              "Functional.relu.0.backward.input.0"));
  EXPECT_FALSE(FuzzyNamesMatch("Functional.relu.3.backward.input.0",
                               "Functional.relu.0.forward.input.0"));
  EXPECT_TRUE(FuzzyNamesMatch("Tensor.x.parameters_grad.weight",
                              "Tensor.x.parameters_grad.weight"));
}

TEST(FuzzyMatchTest, InsertedCallWithOtherShapesStaysUnmatched) {
  auto b = Dump({{"Functional.linear.0.forward", kLinear},
                 {"Functional.relu.0.forward", kRelu},
                 {"Functional.linear.1.forward", kLinear}});
  auto t = Dump({{"Functional.linear.0.forward", kSide},  // inserted
                 {"Functional.linear.1.forward", kLinear},
                 {"Functional.relu.0.forward", kRelu},
                 {"Functional.linear.2.forward", kLinear}});
  std::vector<int> m = Rows122(t, b);
  std::vector<int> want = {-1, -1, -1, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(m, want);
  // Names alone (same API, other shapes) would have paired it.
  MatchOptions fuzzy;
  fuzzy.fuzzy = true;
  fuzzy.fuzzy_rule = FuzzyRule::kStructures;
  EXPECT_EQ(MatchRows(t, b, fuzzy), want);
  // msprobe 26 pairs by name alone: the inserted linear takes the
  // baseline's first linear, the target's second linear the baseline's
  // second, and the relu between them is passed over; then the baseline
  // has run out.
  fuzzy.fuzzy_rule = FuzzyRule::kMsprobe;
  EXPECT_EQ(MatchRows(t, b, fuzzy),
            (std::vector<int>{0, 1, 2, 3, 6, 7, 8, 9, -1, -1, -1, -1, -1, -1}));
}

TEST(FuzzyMatchTest, FloatDTypesInterchangeableOthersNot) {
  auto b = Dump({{"Functional.relu.0.forward", kRelu},
                 {"Functional.relu.1.forward", kRelu}});
  auto t =
      Dump({{"Functional.relu.0.forward",
             {"input.0:[4, 16, 96]@torch.bfloat16",
              "output.0:[4, 16, 96]@torch.float16"}},
            {"Functional.relu.1.forward",
             {"input.0:[4, 16, 96]@torch.int64", "output.0:[4, 16, 96]"}}});
  EXPECT_EQ(Rows122(t, b), (std::vector<int>{0, 1, -1, -1}));
  // msprobe 26 pairs by name, then cuts the int64 row's pair; the float
  // output beside it keeps its own.
  EXPECT_EQ(FuzzyMatchRows(t, b), (std::vector<int>{0, 1, -1, 3}));
}

TEST(FuzzyMatchTest, EntriesWithoutInputsMatchOnlyWhenIdentical) {
  // msprobe's check_struct_match: the loose dtype rule needs inputs.
  auto b = Dump({{"Torch.zeros.0.forward", {"output.0:[4]"}}});
  auto same = Dump({{"Torch.zeros.5.forward", {"output.0:[4]"}}});
  auto half = Dump({{"Torch.zeros.5.forward", {"output.0:[4]@torch.float16"}}});
  EXPECT_EQ(Rows122(same, b), (std::vector<int>{0}));
  EXPECT_EQ(Rows122(half, b), (std::vector<int>{-1}));
}

// Both rules read their queues alike: one entry (1.2.2) or row (msprobe
// 26) of each side at a time.
TEST(FuzzyMatchTest, QueueScanOrder) {
  // Crossed pair: A B against B A. The newest target entry B is found in
  // the baseline queue first; A, queued before it, stays unmatched.
  auto t = Dump(
      {{"F.a.0.forward", {"input.0:[1]"}}, {"F.b.0.forward", {"input.0:[1]"}}});
  auto b = Dump(
      {{"F.b.0.forward", {"input.0:[1]"}}, {"F.a.0.forward", {"input.0:[1]"}}});
  EXPECT_EQ(Rows122(t, b), (std::vector<int>{-1, 0}));
  EXPECT_EQ(FuzzyMatchRows(t, b), (std::vector<int>{-1, 0}));
  // Baseline entry found in the target queue: target entries before it
  // are unmatched, the baseline's extra entry is skipped.
  auto t2 = Dump({{"F.x.0.forward", {"input.0:[1]"}},
                  {"F.a.0.forward", {"input.0:[1]"}},
                  {"F.c.0.forward", {"input.0:[1]"}}});
  auto b2 = Dump({{"F.a.0.forward", {"input.0:[1]"}},
                  {"F.y.0.forward", {"input.0:[1]"}},
                  {"F.c.0.forward", {"input.0:[1]"}}});
  EXPECT_EQ(Rows122(t2, b2), (std::vector<int>{-1, 0, 2}));
  EXPECT_EQ(FuzzyMatchRows(t2, b2), (std::vector<int>{-1, 0, 2}));
  // A forward row never pairs with a backward one.
  auto t3 = Dump({{"F.a.0.backward", {"input.0:[1]"}}});
  auto b3 = Dump({{"F.a.0.forward", {"input.0:[1]"}}});
  EXPECT_EQ(Rows122(t3, b3), (std::vector<int>{-1}));
  EXPECT_EQ(FuzzyMatchRows(t3, b3), (std::vector<int>{-1}));
}

TEST(FuzzyMatchTest, TargetLongerThanBaselineKeepsItsRowsUnmatched) {
  auto b = Dump({{"F.a.0.forward", {"input.0:[1]"}}});
  auto t = Dump({{"F.a.0.forward", {"input.0:[1]"}},
                 {"F.a.1.forward", {"input.0:[1]"}},
                 {"F.a.2.forward", {"input.0:[1]"}}});
  for (FuzzyRule rule : {FuzzyRule::kStructures, FuzzyRule::kMsprobe}) {
    EXPECT_EQ(FuzzyMatchRows(t, b, rule), (std::vector<int>{0, -1, -1}));
    EXPECT_EQ(FuzzyMatchRows({}, b, rule), (std::vector<int>{}));
    EXPECT_EQ(FuzzyMatchRows(t, {}, rule), (std::vector<int>{-1, -1, -1}));
    // The target is shorter: the baseline's rest is never read into a pair.
    EXPECT_EQ(FuzzyMatchRows(b, t, rule), (std::vector<int>{0}));
  }
}

TEST(FuzzyMatchTest, AmbiguousNamesComparedOneByOne) {
  // "X.forward.backward.input.0" holds both words; against a name with only
  // "backward" msprobe renames both with "backward": "X.input.0" each.
  auto t = Dump({{"X.forward.backward", {"input.0:[2]"}},
                 {"Y.forward_net.0.backward", {"input.0:[2]"}}});
  auto b = Dump({{"X.idx.backward", {"input.0:[2]"}},
                 {"Y.forward_net.1.backward", {"input.0:[2]"}}});
  // The second pair: both hold "forward", renamed with it, and the call
  // index after it differs ("_net.0.backward..." vs "_net.1.backward...").
  EXPECT_EQ(Rows122(t, b), (std::vector<int>{0, -1}));
}

TEST(FuzzyMatchTest, LargeDivergentStreamsStayFast) {
  // 20,000 entries each, nothing in common: the queues grow to the whole
  // dump; hashing keeps this linear (a pairwise scan would do 2e8 checks).
  std::vector<std::pair<std::string, std::vector<std::string>>> te, be;
  for (int i = 0; i < 20000; ++i) {
    te.push_back(
        {"F.t" + std::to_string(i % 50) + "." + std::to_string(i) + ".forward",
         {"input.0:[1]"}});
    be.push_back(
        {"F.b" + std::to_string(i % 50) + "." + std::to_string(i) + ".forward",
         {"input.0:[1]"}});
  }
  std::vector<int> m = Rows122(Dump(te), Dump(be));
  EXPECT_EQ(std::count(m.begin(), m.end(), -1), 20000);
}

// ---- msprobe 26 / HEAD: rows by name alone (acc_compare.py
// process_fuzzy_match, match_op, gen_dtype_condition).

TEST(FuzzyMatchTest, HeadRenameKeepsTheDirection) {
  EXPECT_EQ(MsprobeHeadRenameApi("Tensor.__mul__.3.forward.input.0"),
            "Tensor.__mul__.forward.input.0");
  EXPECT_EQ(MsprobeHeadRenameApi("Functional.relu.0.backward.output.0"),
            "Functional.relu.backward.output.0");
  // "forward" first when a name holds both, as msprobe's `in` tests.
  EXPECT_EQ(MsprobeHeadRenameApi("X.y.2.backward.forward_hook.input.0"),
            "X.y.2.forward_hook.input.0");
  EXPECT_EQ(MsprobeHeadRenameApi("Module.fc.Linear.forward.0.input.0"),
            "Module.fc.forward.0.input.0");
  EXPECT_EQ(MsprobeHeadRenameApi("Module.fc.Linear.parameters_grad.weight"),
            "Module.fc.Linear.parameters_grad.weight");
}

TEST(FuzzyMatchTest, HeadPairsAnInsertedCallOfOtherShapes) {
  // The baseline has an extra multiply of another shape first: msprobe 26
  // pairs the target's __mul__.0 with it (shapes are not looked at);
  // msprobe 1.2.2 with the baseline's __mul__.1.
  auto t = Dump(
      {{"Tensor.__mul__.0.forward",
        {"input.0:[4, 8]", "input.1:[4, 8]", "output.0:[4, 8]"}},
       {"Functional.relu.0.forward", {"input.0:[4, 8]", "output.0:[4, 8]"}}});
  auto b = Dump(
      {{"Tensor.__mul__.0.forward",
        {"input.0:[2]", "input.1:[2]", "output.0:[2]"}},
       {"Tensor.__mul__.1.forward",
        {"input.0:[4, 8]", "input.1:[4, 8]", "output.0:[4, 8]"}},
       {"Functional.relu.0.forward", {"input.0:[4, 8]", "output.0:[4, 8]"}}});
  EXPECT_EQ(FuzzyMatchRows(t, b), (std::vector<int>{0, 1, 2, 6, 7}));
  EXPECT_EQ(Rows122(t, b), (std::vector<int>{3, 4, 5, 6, 7}));
}

TEST(FuzzyMatchTest, HeadLargeDivergentStreamsStayFast) {
  // 40,000 rows each, nothing in common: the queues grow to the whole dump;
  // lookups by name keep this linear (msprobe's scan is quadratic).
  std::vector<std::pair<std::string, std::vector<std::string>>> te, be;
  for (int i = 0; i < 20000; ++i) {
    te.push_back({"F.t" + std::to_string(i) + ".0.forward",
                  {"input.0:[1]", "output.0:[1]"}});
    be.push_back({"F.b" + std::to_string(i) + ".0.forward",
                  {"input.0:[1]", "output.0:[1]"}});
  }
  std::vector<int> m = FuzzyMatchRows(Dump(te), Dump(be));
  EXPECT_EQ(std::count(m.begin(), m.end(), -1), 40000);
}

}  // namespace
}  // namespace lockstep
