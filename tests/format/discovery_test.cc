#include "lockstep/format/discovery.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <initializer_list>

#include "lockstep/core/file.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

const std::string kMsprobe = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";
const std::string kQuickStart = kMsprobe + "/quick_start";

// A scratch directory tree, removed at the end of the test.
class TreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("lockstep_discovery_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Creates files (and their dirs) under the root.
  void Touch(std::initializer_list<std::string> rels) {
    for (const auto& rel : rels) {
      fs::create_directories((root_ / rel).parent_path());
      ASSERT_TRUE(WriteFileAtomic((root_ / rel).string(), "{}").ok());
    }
  }
  void Mkdir(const std::string& rel) { fs::create_directories(root_ / rel); }
  std::string Path(const std::string& rel = "") const {
    return rel.empty() ? root_.string() : (root_ / rel).string();
  }

  fs::path root_;
};

std::vector<int64_t> Steps(const DumpLayout& l) {
  std::vector<int64_t> out;
  for (const auto& s : l.steps) out.push_back(s.step);
  return out;
}

std::vector<std::string> RankNames(const StepLayout& s) {
  std::vector<std::string> out;
  for (const auto& r : s.ranks) out.push_back(r.name);
  return out;
}

TEST(DiscoveryFixtureTest, QuickStartRootHasTwoStepsOfOneProcDir) {
  auto l = DiscoverDump(kQuickStart);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(Steps(*l), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(l->rank_count(), 2u);
  const RankLayout& r0 = l->steps[0].ranks[0];
  EXPECT_EQ(r0.name, "proc2016");
  EXPECT_EQ(r0.rank, 0);
  EXPECT_EQ(r0.dump_json, kQuickStart + "/step0/proc2016/dump.json");
  EXPECT_TRUE(r0.has_stack_json);
  EXPECT_TRUE(r0.has_construct_json);
  EXPECT_FALSE(r0.has_tensor_data);
  const RankLayout& r1 = l->steps[1].ranks[0];
  EXPECT_FALSE(r1.has_stack_json);  // step1 has no stack.json
  EXPECT_TRUE(r1.has_construct_json);
}

TEST(DiscoveryFixtureTest, StepDirRankDirAndFile) {
  auto step = DiscoverDump(kQuickStart + "/step1");
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(Steps(*step), (std::vector<int64_t>{1}));
  auto rank = DiscoverDump(kQuickStart + "/step0/proc2016");
  ASSERT_TRUE(rank.ok());
  EXPECT_EQ(Steps(*rank), (std::vector<int64_t>{-1}));
  EXPECT_EQ(rank->steps[0].ranks[0].name, "proc2016");
  auto file = DiscoverDump(kQuickStart + "/step0/proc2016/dump.json");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->steps[0].ranks[0].dir, kQuickStart + "/step0/proc2016");
  EXPECT_TRUE(file->steps[0].ranks[0].has_stack_json);
}

TEST(DiscoveryFixtureTest, DescendsThroughMsprobeOutDir) {
  auto l = DiscoverDump(kMsprobe + "/toy/dumpA");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->root, kMsprobe + "/toy/dumpA/out");
  EXPECT_EQ(Steps(*l), (std::vector<int64_t>{0}));
  EXPECT_EQ(l->steps[0].ranks[0].name, "proc16954");
  EXPECT_TRUE(l->steps[0].ranks[0].has_tensor_data);
}

TEST(DiscoveryFixtureTest, SeveralDumpsBelowIsAmbiguous) {
  auto l = DiscoverDump(kMsprobe + "/toy");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(l.status().message().find(
                "several subdirectories lead to dumps (dumpA, dumpB"),
            std::string::npos)
      << l.status().message();
}

TEST_F(TreeTest, StepsAndRanksSortNumerically) {
  Touch({"step10/rank0/dump.json", "step2/rank0/dump.json",
         "step2/rank10/dump.json", "step2/rank2/dump.json",
         "step10/rank1/dump.json", "step2/rank1/dump.json"});
  Mkdir("step2/rank1/dump_tensor_data");
  Touch({"step2/notes.txt", "pynative/step0/rank0/dump.json",
         "step01/rank0/dump.json"});
  auto l = DiscoverDump(Path());
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(Steps(*l),
            (std::vector<int64_t>{2, 10}));  // step01, pynative/ ignored
  EXPECT_EQ(RankNames(l->steps[0]),
            (std::vector<std::string>{"rank0", "rank1", "rank2", "rank10"}));
  EXPECT_EQ(l->steps[1].dir, Path("step10"));
}

TEST_F(TreeTest, RankWithoutNumberIsRankZero) {
  Touch({"step0/rank/dump.json", "step0/rank3/dump.json"});
  auto l = DiscoverDump(Path());
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(RankNames(l->steps[0]),
            (std::vector<std::string>{"rank", "rank3"}));
  EXPECT_EQ(l->steps[0].ranks[0].rank, 0);
  Touch({"step0/rank0/dump.json"});
  auto clash = DiscoverDump(Path());
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("rank/ and rank0/ are both rank 0"),
            std::string::npos)
      << clash.status().message();
}

TEST_F(TreeTest, RanksSortNumericallyNotAsText) {
  Touch({"step0/rank0/dump.json", "step0/rank10/dump.json",
         "step0/rank2/dump.json", "step0/rank1/stack.json",
         "step0/rank1/dump.json"});
  Mkdir("step0/rank1/dump_tensor_data");
  auto l = DiscoverDump(Path());
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(RankNames(l->steps[0]),
            (std::vector<std::string>{"rank0", "rank1", "rank2", "rank10"}));
  const RankLayout& r1 = l->steps[0].ranks[1];
  EXPECT_EQ(r1.rank, 1);
  EXPECT_TRUE(r1.has_stack_json);
  EXPECT_FALSE(r1.has_construct_json);
  EXPECT_TRUE(r1.has_tensor_data);
}

TEST_F(TreeTest, ProcDirs) {
  Touch({"a/step0/proc77/dump.json", "b/step0/proc1/dump.json",
         "b/step0/proc2/dump.json", "c/step0/proc5/dump.json",
         "c/step0/rank0/dump.json"});
  auto a = DiscoverDump(Path("a"));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->steps[0].ranks[0].rank, 0);
  auto b = DiscoverDump(Path("b"));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(b.status().message().find("several proc{pid} dirs (proc1, proc2)"),
            std::string::npos)
      << b.status().message();
  auto c = DiscoverDump(Path("c"));  // rank dirs win; proc ignored
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(RankNames(c->steps[0]), (std::vector<std::string>{"rank0"}));
}

TEST_F(TreeTest, RankDirWithoutDumpJsonIsSkippedAndNamed) {
  // A run killed in step 1 (tensor mode writes dump.json last).
  Touch({"run/step0/rank0/dump.json", "run/step0/rank1/dump.json",
         "run/step1/rank0/dump_tensor_data/Functional.linear.0.forward."
         "input.0.pt",
         "run/step1/rank1/dump.json"});
  auto l = DiscoverDump(Path("run"));
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->steps.size(), 2u);
  EXPECT_EQ(RankNames(l->steps[1]), (std::vector<std::string>{"rank1"}));
  ASSERT_EQ(l->warnings.size(), 1u);
  EXPECT_NE(l->warnings[0].find("step1/rank0 has no dump.json"),
            std::string::npos)
      << l->warnings[0];
  // A step whose every rank is unfinished is left out.
  Touch({"run2/step0/rank0/dump.json", "run2/step1/rank0/stack.json"});
  auto m = DiscoverDump(Path("run2"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->steps.size(), 1u);
  EXPECT_EQ(m->warnings.size(), 1u);
  // Nothing finished at all: an error naming the rank dir.
  Touch({"run3/step0/rank0/stack.json"});
  auto n = DiscoverDump(Path("run3"));
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kNotFound);
  auto o = DiscoverDump(Path("run3/step0"));
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("rank0: a rank dir without dump.json"),
            std::string::npos)
      << o.status().message();
}

TEST_F(TreeTest, StepDirWithoutRanks) {
  Touch({"step0/rank0/dump.json"});
  Mkdir("step1/other");
  auto l = DiscoverDump(Path());
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find(
                "step1: a step dir without rank{R}/ or proc{pid}/ dirs"),
            std::string::npos)
      << l.status().message();
}

TEST_F(TreeTest, NothingHereListsWhatWasLookedFor) {
  Mkdir("x/y");
  Touch({"x/readme.txt"});
  auto l = DiscoverDump(Path());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kNotFound);
  EXPECT_NE(l.status().message().find(
                "looked for dump.json (a rank dir), rank{R}/ or "
                "proc{pid}/ dirs"),
            std::string::npos)
      << l.status().message();
  EXPECT_EQ(DiscoverDump(Path("nope")).status().code(), StatusCode::kNotFound);
}

TEST_F(TreeTest, DescentIsBounded) {
  Touch({"a/b/c/step0/rank0/dump.json", "p/q/r/s/step0/rank0/dump.json",
         "x/q/r/s/t/step0/rank0/dump.json"});
  auto found = DiscoverDump(Path("a"));
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->root, Path("a/b/c"));
  EXPECT_TRUE(DiscoverDump(Path("p")).ok());  // three levels down
  auto too_deep = DiscoverDump(Path("x"));
  EXPECT_EQ(too_deep.status().code(), StatusCode::kNotFound);
}

TEST_F(TreeTest, PairingByStepAndRankPosition) {
  Touch({"t/step0/rank0/dump.json", "t/step0/rank1/dump.json",
         "t/step1/rank0/dump.json", "t/step1/rank1/dump.json",
         "t/step3/rank0/dump.json", "t/step3/rank1/dump.json",
         "b/step0/rank4/dump.json", "b/step0/rank5/dump.json",
         "b/step1/rank0/dump.json", "b/step1/rank1/dump.json",
         "b/step2/rank0/dump.json", "b/step2/rank1/dump.json"});
  auto t = DiscoverDump(Path("t"));
  auto b = DiscoverDump(Path("b"));
  ASSERT_TRUE(t.ok() && b.ok());
  auto p = PairLayouts(*t, *b);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->pairs.size(), 4u);
  EXPECT_EQ(p->pairs[0].target.name, "rank0");
  EXPECT_EQ(p->pairs[0].baseline.name, "rank4");
  EXPECT_EQ(p->pairs[3].target_step, 1);
  EXPECT_EQ(p->pairs[3].baseline.name, "rank1");
  EXPECT_EQ(p->target_only_steps, (std::vector<int64_t>{3}));
  EXPECT_EQ(p->baseline_only_steps, (std::vector<int64_t>{2}));
}

TEST_F(TreeTest, RankCountMismatchPairsRanksByNumber) {
  // msprobe refuses unequal rank counts; lockstep pairs equal numbers and
  // lists the rest (a run that lost a rank still compares the others).
  Touch({"t/step0/rank0/dump.json", "t/step0/rank1/dump.json",
         "t/step0/rank3/dump.json", "b/step0/rank1/dump.json",
         "b/step0/rank2/dump.json", "b/step1/rank0/dump.json",
         "t/step1/rank0/dump.json"});
  auto p = PairLayouts(*DiscoverDump(Path("t")), *DiscoverDump(Path("b")));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->pairs.size(), 2u);
  EXPECT_EQ(p->pairs[0].target.name, "rank1");
  EXPECT_EQ(p->pairs[0].baseline.name, "rank1");
  EXPECT_EQ(p->pairs[1].target_step, 1);
  ASSERT_EQ(p->target_only_ranks.size(), 2u);
  EXPECT_EQ(p->target_only_ranks[0].rank, 0);
  EXPECT_EQ(p->target_only_ranks[1].rank, 3);
  ASSERT_EQ(p->baseline_only_ranks.size(), 1u);
  EXPECT_EQ(p->baseline_only_ranks[0].step, 0);
  EXPECT_EQ(p->baseline_only_ranks[0].rank, 2);
}

TEST_F(TreeTest, NoCommonStep) {
  Touch({"t/step0/rank0/dump.json", "t/step1/rank0/dump.json",
         "b/step2/rank0/dump.json", "b/step3/rank0/dump.json"});
  auto p = PairLayouts(*DiscoverDump(Path("t")), *DiscoverDump(Path("b")));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(
                "no step in common: target has steps [0, 1], baseline "
                "[2, 3]"),
            std::string::npos)
      << p.status().message();
}

TEST(DiscoveryFixtureTest, SingleStepsPairWhateverTheirNumbers) {
  auto t = DiscoverDump(kQuickStart + "/step1");
  auto b = DiscoverDump(kQuickStart + "/step0");
  ASSERT_TRUE(t.ok() && b.ok());
  auto p = PairLayouts(*t, *b);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->pairs.size(), 1u);
  EXPECT_EQ(p->pairs[0].target_step, 1);
  EXPECT_EQ(p->pairs[0].baseline_step, 0);
  EXPECT_EQ(p->pairs[0].target.dump_json,
            kQuickStart + "/step1/proc2016/dump.json");
  auto q = PairLayouts(*DiscoverDump(kQuickStart), *DiscoverDump(kQuickStart));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->pairs.size(), 2u);
}

}  // namespace
}  // namespace lockstep
