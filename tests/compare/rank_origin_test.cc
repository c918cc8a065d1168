// The origin of a divergence across ranks (rank_origin.h) on generated dumps
// of 8, 64 and 512 ranks: data parallel all_reduce, all_gather in groups,
// pipeline send/recv chains; one rank faulted at a known operator, before or
// between collectives. The origin must be that rank and operator, and the
// path must reach the ranks the data went to.
#include "lockstep/compare/rank_origin.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "lockstep/compare/compare_dumps.h"
#include "testing/rank_dumps.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

using testing::Phase;
using testing::RankProgram;

CompareResult Compare(const RankProgram& p) {
  std::string dir = testing::FreshTestDir("rank_origin_");
  testing::WriteRankDumps(p, dir);
  StatusOr<CompareResult> r =
      CompareDumpPaths(dir + "target", dir + "baseline", CompareOptions());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : CompareResult();
}

// The ranks the path reached through `entry`.
std::set<int> ReachedThrough(const RankOrigin& o, const std::string& entry) {
  std::set<int> out;
  for (const OriginHop& h : o.path)
    if (h.entry == entry) out.insert(h.rank);
  return out;
}

std::set<int> Range(int first, int last, int except = -1) {
  std::set<int> out;
  for (int r = first; r <= last; ++r)
    if (r != except) out.insert(r);
  return out;
}

// Data parallel: compute, all_reduce (world), compute, all_reduce, compute.
RankProgram DataParallel(int ranks, int fault_rank, int fault_op) {
  RankProgram p;
  p.ranks = ranks;
  p.phases = {{Phase::kCompute, 3}, {Phase::kAllReduce}, {Phase::kCompute, 2},
              {Phase::kBarrier},    {Phase::kAllReduce}, {Phase::kCompute, 1}};
  p.fault_rank = fault_rank;
  p.fault_op = fault_op;
  return p;
}

// The case: rank 5 changes an operator before the all_reduce, and
// every rank differs from the all_reduce on. Each rank's own first
// divergence is then its all_reduce; the origin is rank 5's operator.
TEST(RankOriginTest, FaultBeforeAllReduceNamesTheFaultedRank) {
  CompareResult r = Compare(DataParallel(8, 5, 1));
  const RankOrigin& o = r.origin;
  ASSERT_TRUE(o.analyzed);
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 5);
  EXPECT_EQ(o.step, 0);
  EXPECT_EQ(o.entry, "Functional.linear.1.forward");
  EXPECT_EQ(o.reason, DivergenceReason::kPrecision);
  EXPECT_EQ(ReachedThrough(o, "Distributed.all_reduce.0.forward"),
            Range(0, 7, 5));
  EXPECT_EQ(o.path.size(), 7u);
  for (const OriginHop& h : o.path) EXPECT_EQ(h.from, 5);
  EXPECT_TRUE(o.others.empty());
  // The first divergence is the origin, not rank 0's all_reduce.
  EXPECT_EQ(r.first_divergence.rank, 5);
  EXPECT_EQ(r.first_divergence.entry, "Functional.linear.1.forward");
}

// async_op=True: msprobe dumps the call after wait(), its input already
// reduced, so every rank's all_reduce input differs; none of them is an
// origin.
TEST(RankOriginTest, AsyncAllReduceInputsAreNotOrigins) {
  RankProgram p = DataParallel(8, 5, 1);
  p.async_all_reduce = true;
  CompareResult r = Compare(p);
  const RankOrigin& o = r.origin;
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 5);
  EXPECT_EQ(o.entry, "Functional.linear.1.forward");
  EXPECT_EQ(ReachedThrough(o, "Distributed.all_reduce.0.forward"),
            Range(0, 7, 5));
}

TEST(RankOriginTest, FaultBetweenCollectives) {
  CompareResult r = Compare(DataParallel(8, 3, 4));
  const RankOrigin& o = r.origin;
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.entry, "Functional.linear.4.forward");
  EXPECT_EQ(ReachedThrough(o, "Distributed.all_reduce.1.forward"),
            Range(0, 7, 3));
}

TEST(RankOriginTest, NoFaultNoOrigin) {
  CompareResult r = Compare(DataParallel(8, -1, -1));
  EXPECT_TRUE(r.origin.analyzed);
  EXPECT_FALSE(r.origin.found);
  EXPECT_FALSE(r.first_divergence.found);
  EXPECT_EQ(r.summary.error, 0);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
}

// Tensor parallel groups of 8 gather, then data parallel all_reduce over all
// 64: a fault on rank 13 reaches its group through the all_gather, the rest
// through the all_reduce.
TEST(RankOriginTest, AllGatherGroupsThenAllReduce64Ranks) {
  RankProgram p;
  p.ranks = 64;
  p.phases = {{Phase::kCompute, 2},
              {Phase::kAllGather, 1, 8},
              {Phase::kCompute, 2},
              {Phase::kAllReduce}};
  p.fault_rank = 13;
  p.fault_op = 1;
  p.garbage_buffers = true;  // the gather buffers differ: ignored
  CompareResult r = Compare(p);
  const RankOrigin& o = r.origin;
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 13);
  EXPECT_EQ(o.entry, "Functional.linear.1.forward");
  EXPECT_EQ(ReachedThrough(o, "Distributed.all_gather.0.forward"),
            Range(8, 15, 13));
  std::set<int> rest = Range(0, 63);
  for (int k = 8; k <= 15; ++k) rest.erase(k);
  EXPECT_EQ(ReachedThrough(o, "Distributed.all_reduce.0.forward"), rest);
  EXPECT_EQ(o.path.size(), 63u);
}

// Pipeline: stage k receives from k - 1 and sends to k + 1. The fault in
// stage 2 reaches 3..7 downstream, hop by hop; stages 0 and 1 stay equal.
TEST(RankOriginTest, PipelineFaultInStage2) {
  RankProgram p;
  p.ranks = 8;
  p.phases = {{Phase::kCompute, 1}, {Phase::kPipeline, 2}};
  p.fault_rank = 2;
  p.fault_op = 1;  // the first op after its recv
  p.garbage_buffers = true;
  CompareResult r = Compare(p);
  const RankOrigin& o = r.origin;
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 2);
  EXPECT_EQ(o.entry, "Functional.linear.1.forward");
  ASSERT_EQ(o.path.size(), 5u);
  for (size_t k = 0; k < o.path.size(); ++k) {
    EXPECT_EQ(o.path[k].rank, static_cast<int>(k) + 3);
    EXPECT_EQ(o.path[k].from, static_cast<int>(k) + 2);
    EXPECT_EQ(o.path[k].entry, "Distributed.recv.0.forward");
  }
}

TEST(RankOriginTest, PipelineWithoutFaultHasNoOrigin) {
  RankProgram p;
  p.ranks = 8;
  p.phases = {{Phase::kCompute, 1}, {Phase::kPipeline, 2}};
  CompareResult r = Compare(p);
  EXPECT_TRUE(r.origin.analyzed);
  EXPECT_FALSE(r.origin.found);
  EXPECT_FALSE(r.first_divergence.found);
}

// 512 ranks: all_reduce in groups of 8, then over all; the fault on rank
// 300 between the two.
TEST(RankOriginTest, FiveHundredTwelveRanks) {
  RankProgram p;
  p.ranks = 512;
  p.phases = {{Phase::kCompute, 2},
              {Phase::kAllReduce, 1, 8},
              {Phase::kCompute, 1},
              {Phase::kAllReduce}};
  p.fault_rank = 300;
  p.fault_op = 2;
  CompareResult r = Compare(p);
  const RankOrigin& o = r.origin;
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 300);
  EXPECT_EQ(o.entry, "Functional.linear.2.forward");
  EXPECT_EQ(ReachedThrough(o, "Distributed.all_reduce.1.forward"),
            Range(0, 511, 300));
  EXPECT_TRUE(ReachedThrough(o, "Distributed.all_reduce.0.forward").empty());
}

TEST(RankOriginTest, FiveHundredTwelveRanksWithoutFault) {
  RankProgram p;
  p.ranks = 512;
  p.phases = {
      {Phase::kCompute, 1}, {Phase::kAllReduce, 1, 8}, {Phase::kAllReduce}};
  CompareResult r = Compare(p);
  EXPECT_TRUE(r.origin.analyzed);
  EXPECT_FALSE(r.origin.found);
}

// The same change on every rank (a changed kernel everywhere): every rank
// is an origin of its own; the lowest is named, the rest are `others`.
TEST(RankOriginTest, SameChangeOnEveryRankIsIndependent) {
  RankProgram p = DataParallel(4, -1, -1);
  std::string dir = testing::FreshTestDir("rank_origin_");
  for (int r = 0; r < 4; ++r) {
    p.fault_rank = r;
    p.fault_op = 0;
    testing::WriteRankDumps(p, dir + "all" + std::to_string(r));
    std::filesystem::create_directories(dir + "t/step0");
    std::filesystem::create_directories(dir + "b/step0");
    std::string rank = "/step0/rank" + std::to_string(r);
    std::filesystem::rename(dir + "all" + std::to_string(r) + "/target" + rank,
                            dir + "t" + rank);
    std::filesystem::rename(
        dir + "all" + std::to_string(r) + "/baseline" + rank, dir + "b" + rank);
  }
  StatusOr<CompareResult> r =
      CompareDumpPaths(dir + "t", dir + "b", CompareOptions());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const RankOrigin& o = r->origin;
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 0);
  EXPECT_EQ(o.entry, "Functional.linear.0.forward");
  ASSERT_EQ(o.others.size(), 3u);
  EXPECT_EQ(o.others[0].rank, 1);
  EXPECT_TRUE(o.path.empty());
}

// A Distributed entry whose group cannot be read is a warning, not a crash;
// the calls are linked as one unknown group and the origin still found.
TEST(RankOriginTest, MalformedGroupWarns) {
  for (const char* group :
       {"{\"type\": \"torch.ProcessGroup\", \"group_ranks\": \"zero, one\"}",
        "{\"type\": \"torch.ProcessGroup\"}",
        "{\"type\": \"torch.ProcessGroup\", \"group_ranks\": [0, -1]}",
        "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\"}",
        "[{\"type\": \"int\", \"value\": 0}, {\"type\": \"str\"}]"}) {
    SCOPED_TRACE(group);
    RankProgram p = DataParallel(8, 5, 1);
    p.group_override = group;
    CompareResult r = Compare(p);
    bool warned = false;
    for (const std::string& w : r.warnings)
      warned |= w.find("its group is neither") != std::string::npos;
    EXPECT_TRUE(warned);
    EXPECT_LE(r.warnings.size(), 10u);  // a few, not one per rank and call
    ASSERT_TRUE(r.origin.found);
    EXPECT_EQ(r.origin.rank, 5);
    EXPECT_EQ(r.origin.entry, "Functional.linear.1.forward");
  }
}

TEST(RankOriginTest, RankRanges) {
  EXPECT_EQ(RankRanges({0, 1, 2, 3, 4, 6, 7}), "0..4, 6, 7");
  EXPECT_EQ(RankRanges({9, 3, 4, 3, 5, 11}), "3..5, 9, 11");
  EXPECT_EQ(RankRanges({}), "");
}

}  // namespace
}  // namespace lockstep
