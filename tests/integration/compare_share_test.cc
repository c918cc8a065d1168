// CompareDumpRowsShared among P processes (threads here, with an in-process
// ShareGroup; tests/cli/mpi_compare_test.cc runs real MPI processes) gives
// process 0 exactly CompareDumpRows's result: the same CSV, summary.json,
// warnings and module tree, and the same errors.
#include "lockstep/compare/compare_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <filesystem>
#include <fstream>
#include <thread>

#include "lockstep/compare/compare_dumps.h"
#include "lockstep/report/csv_report.h"
#include "lockstep/report/summary_json.h"
#include "testing/rank_dumps.h"
#include "testing/same_bytes.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

using testing::Phase;
using testing::RankProgram;

// Processes as threads: each call a barrier, slots written, read, barrier.
class ThreadGroup : public ShareGroup {
 public:
  struct Shared {
    explicit Shared(int n) : slots(n), sync(n) {}
    std::vector<std::string> slots;
    std::barrier<> sync;
  };
  ThreadGroup(Shared* s, int index) : s_(s), index_(index) {}
  int index() const override { return index_; }
  int size() const override { return static_cast<int>(s_->slots.size()); }
  std::vector<std::string> AllGather(const std::string& mine) override {
    s_->slots[index_] = mine;
    s_->sync.arrive_and_wait();
    std::vector<std::string> all = s_->slots;
    s_->sync.arrive_and_wait();
    return all;
  }
  std::vector<std::string> Gather(const std::string& mine) override {
    std::vector<std::string> all = AllGather(mine);
    if (index_ != 0) all.clear();
    return all;
  }

 private:
  Shared* s_;
  int index_;
};

std::vector<StatusOr<CompareResult>> RunShared(int processes,
                                               const std::string& dir) {
  ThreadGroup::Shared shared(processes);
  std::vector<StatusOr<CompareResult>> out(processes, Status::Internal("x"));
  std::vector<std::thread> threads;
  for (int i = 0; i < processes; ++i) {
    threads.emplace_back([&, i] {
      ThreadGroup g(&shared, i);
      out[i] = CompareDumpRowsShared(dir + "target", dir + "baseline",
                                     CompareOptions(), &g);
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

// Every process count from 1 to `max` gives process 0 what one process
// makes, and the others an empty result (or the same error).
void ExpectSameAsOneProcess(const std::string& dir, int max) {
  StatusOr<CompareResult> want =
      CompareDumpRows(dir + "target", dir + "baseline", CompareOptions());
  if (want.ok()) FinishResult(&*want);
  for (int p = 1; p <= max; ++p) {
    SCOPED_TRACE("processes: " + std::to_string(p));
    std::vector<StatusOr<CompareResult>> got = RunShared(p, dir);
    ASSERT_EQ(got[0].ok(), want.ok()) << got[0].status().ToString();
    if (!want.ok()) {
      EXPECT_EQ(got[0].status().code(), want.status().code());
      EXPECT_EQ(got[0].status().message(), want.status().message());
      continue;
    }
    FinishResult(&*got[0]);
    const CompareResult& g = *got[0];
    EXPECT_EQ(g.warnings, want->warnings);
    EXPECT_EQ(g.modules.size(), want->modules.size());
    EXPECT_TRUE(
        testing::SameBytes(RenderCompareCsv(g, 0, g.rows.size()),
                           RenderCompareCsv(*want, 0, want->rows.size())));
    EXPECT_TRUE(
        testing::SameBytes(RenderSummaryJson(g), RenderSummaryJson(*want)));
    for (int i = 1; i < p; ++i) {
      ASSERT_TRUE(got[i].ok()) << got[i].status().ToString();
      EXPECT_TRUE(got[i]->rows.empty() && got[i]->columns.empty());
    }
  }
}

RankProgram DataParallel(int ranks, int fault_rank) {
  return testing::DataParallelProgram(ranks, fault_rank);
}

std::string Written(const RankProgram& p) {
  std::string dir = testing::FreshTestDir("compare_share_");
  testing::WriteRankDumps(p, dir);
  return dir;
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// One process's result (the scenario is what the test means it to be).
CompareResult OneProcess(const std::string& dir) {
  StatusOr<CompareResult> r =
      CompareDumpRows(dir + "target", dir + "baseline", CompareOptions());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : CompareResult();
}

bool HasStackColumn(const CompareResult& r) {
  return std::find(r.columns.begin(), r.columns.end(), "NPU_Stack_Info") !=
         r.columns.end();
}

TEST(CompareShareTest, SameResultForEveryProcessCount) {
  ExpectSameAsOneProcess(Written(DataParallel(8, 5)), 5);
}

TEST(CompareShareTest, MoreProcessesThanRanks) {
  ExpectSameAsOneProcess(Written(DataParallel(2, 1)), 3);
}

TEST(CompareShareTest, RankMissingInOneShare) {
  std::string dir = Written(DataParallel(8, 5));
  std::filesystem::remove_all(dir + "target/step0/rank6");
  ExpectSameAsOneProcess(dir, 3);
}

TEST(CompareShareTest, UnreadableDumpJsonInOneShare) {
  std::string dir = Written(DataParallel(8, 5));
  WriteFile(dir + "target/step0/rank6/dump.json", "{\"task\": ");
  EXPECT_EQ(OneProcess(dir).missing_ranks.size(), 1u);
  ExpectSameAsOneProcess(dir, 3);
}

TEST(CompareShareTest, EveryRankUnreadableGivesTheLastError) {
  std::string dir = Written(DataParallel(3, -1));
  for (int r = 0; r < 3; ++r) {
    WriteFile(dir + "target/step0/rank" + std::to_string(r) + "/dump.json",
              "[" + std::to_string(r));
  }
  ExpectSameAsOneProcess(dir, 3);
}

TEST(CompareShareTest, EmptyDumpInALaterShareIsTheSameError) {
  std::string dir = Written(DataParallel(8, 5));
  WriteFile(dir + "baseline/step0/rank7/dump.json",
            "{\"task\": \"statistics\", \"level\": \"L1\", \"data\": {}}");
  WriteFile(dir + "target/step0/rank2/dump.json", "not json");
  ExpectSameAsOneProcess(dir, 4);
}

// Shares whose own first pair would choose other columns (stack.json on
// the later ranks only) compare again with the first pair's.
TEST(CompareShareTest, MixedStackFilesUseTheFirstPairsColumns) {
  std::string dir = Written(DataParallel(8, 5));
  for (int r = 4; r < 8; ++r) {
    WriteFile(dir + "target/step0/rank" + std::to_string(r) + "/stack.json",
              "{}");
  }
  EXPECT_FALSE(HasStackColumn(OneProcess(dir)));
  ExpectSameAsOneProcess(dir, 4);
  std::filesystem::remove(dir + "target/step0/rank4/stack.json");
  for (int r = 0; r < 2; ++r) {
    WriteFile(dir + "target/step0/rank" + std::to_string(r) + "/stack.json",
              "{}");
  }
  EXPECT_TRUE(HasStackColumn(OneProcess(dir)));
  ExpectSameAsOneProcess(dir, 4);
}

// Only the first 8 ranks' unreadable collectives are said, over all shares.
TEST(CompareShareTest, CollectiveWarningsCappedOverAllShares) {
  RankProgram p = DataParallel(12, -1);
  p.group_override = "{\"type\": \"torch.ProcessGroup\"}";
  std::string dir = Written(p);
  CompareResult one = OneProcess(dir);
  ASSERT_FALSE(one.warnings.empty());
  EXPECT_EQ(one.warnings.back(),
            "collectives: 4 more ranks with calls that could not be read "
            "fully");
  ExpectSameAsOneProcess(dir, 5);
}

TEST(CompareShareTest, PlanErrorsAreEveryProcesss) {
  std::string dir = testing::FreshTestDir("compare_share_");
  std::vector<StatusOr<CompareResult>> got = RunShared(3, dir);
  for (const auto& r : got) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), got[0].status().message());
  }
}

TEST(CompareShareTest, StepsShareTheSameRanks) {
  ComparePlan plan;
  for (int step = 0; step < 2; ++step) {
    for (int r = 0; r < 5; ++r) {
      RankPair p;
      p.target_step = step;
      p.target.rank = r;
      plan.pairing.pairs.push_back(p);
    }
  }
  EXPECT_EQ(ShareOwners(plan, 2),
            (std::vector<int>{0, 0, 0, 1, 1, 0, 0, 0, 1, 1}));
  EXPECT_EQ(ShareOwners(plan, 7),
            (std::vector<int>{0, 1, 2, 4, 5, 0, 1, 2, 4, 5}));
}

}  // namespace
}  // namespace lockstep
