// Reading msprobe's Distributed entries (collectives.h), linking them across
// ranks (collective_links.h), and the origin's fallbacks on hand-built rows
// (rank_origin.h rule 4).
#include "lockstep/compare/collectives.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "lockstep/compare/collective_links.h"
#include "lockstep/compare/rank_origin.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

std::vector<OpRow> Rows(const std::string& entries) {
  std::string path = testing::FreshTestDir("collectives_") + "dump.json";
  std::ofstream(path) << "{\"task\": \"statistics\", \"level\": \"L1\", "
                         "\"data\": {"
                      << entries << "}}";
  StatusOr<FlatDump> d = ReadFlatDump(path);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? d->rows : std::vector<OpRow>();
}

const char kT[] =
    "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": "
    "[2], \"Max\": 1, \"Min\": 0, \"Mean\": 0.5, \"Norm\": 1}";

std::string Int(int v) {
  return "{\"type\": \"int\", \"value\": " + std::to_string(v) + "}";
}
std::string Pg(const std::string& ranks) {
  return "{\"type\": \"torch.ProcessGroup\", \"group_ranks\": " + ranks +
         ", \"group_id\": \"1234abcd\"}";
}
std::string Entry(const std::string& name, const std::string& args,
                  const std::string& kwargs) {
  return "\"" + name + "\": {\"input_args\": [" + args +
         "], \"input_kwargs\": {" + kwargs + "}, \"output\": [" + kT + "]}";
}

TEST(CollectivesTest, ReadsGroupsRootsAndPeersAsMsprobeWritesThem) {
  std::string t = kT;
  std::vector<OpRow> rows = Rows(
      Entry("Functional.linear.0.forward", t, "") + "," +
      Entry("Distributed.all_reduce.0.forward", t, "\"group\": null") + "," +
      Entry("Distributed.broadcast.0.forward",
            t + ", " + Int(2) + ", " + Pg("[0, 2, 4]"), "") +
      "," +
      Entry("Distributed.send.0.forward", t,
            "\"dst\": " + Int(3) + ", \"group\": " + Pg("[0, 1, 2, 3]")) +
      "," + Entry("Distributed.recv.0.forward", t + ", " + Int(1), "") + "," +
      Entry("Distributed.recv.1.forward", t, "\"src\": null") + "," +
      Entry("Distributed.reduce.0.forward", t,
            "\"group\": " + Pg("[4, 5, 2]") + ", \"group_dst\": " + Int(1)) +
      "," +
      Entry("Distributed.all_gather.0.forward", "[" + t + ", " + t + "], " + t,
            "\"group\": [" + Int(2) + ", " + Int(3) + "]") +
      "," +
      Entry("Distributed.barrier.0.forward", "",
            "\"group\": {\"type\": \"str\", \"value\": \"tp-0-1\"}") +
      "," + Entry("Distributed.batch_isend_irecv.0.forward", "", ""));
  std::vector<std::string> problems;
  std::vector<CollectiveCall> c = ReadCollectives(rows, 2, &problems);
  ASSERT_EQ(c.size(), 8u);
  EXPECT_TRUE(problems.empty()) << problems[0];
  EXPECT_EQ(c[0].api, "all_reduce");
  EXPECT_EQ(c[0].group, "world");
  EXPECT_EQ(c[0].flow, CollectiveFlow::kAll);
  EXPECT_EQ(c[1].flow, CollectiveFlow::kFromRoot);
  EXPECT_EQ(c[1].root, 2);  // positional src
  EXPECT_EQ(c[1].group, "[0, 2, 4]");
  EXPECT_EQ(c[2].flow, CollectiveFlow::kSend);
  EXPECT_EQ(c[2].peer, 3);  // keyword dst
  EXPECT_EQ(c[3].flow, CollectiveFlow::kRecv);
  EXPECT_EQ(c[3].peer, 1);   // positional src
  EXPECT_EQ(c[4].peer, -1);  // recv from any rank
  EXPECT_EQ(c[5].root, 5);   // group_dst 1 of [4, 5, 2]
  EXPECT_EQ(c[6].group, "[2, 3]");
  EXPECT_EQ(c[7].group, "tp-0-1");
  EXPECT_EQ(c[7].flow, CollectiveFlow::kNone);
  // Data arguments and receive buffers.
  std::string ag = "Distributed.all_gather.0.forward";
  EXPECT_FALSE(IsCollectiveDataInput(c[6], 2, ag + ".input.0.1"));
  EXPECT_TRUE(IsCollectiveDataInput(c[6], 2, ag + ".input.1"));
  EXPECT_TRUE(IsCollectiveDataInput(c[6], 2, ag + ".input.tensor"));
  EXPECT_TRUE(IsCollectiveDataInput(c[1], 2, c[1].entry + ".input.0"));
  EXPECT_FALSE(IsCollectiveDataInput(c[1], 4, c[1].entry + ".input.0"));
  EXPECT_FALSE(IsCollectiveDataInput(c[3], 2, c[3].entry + ".input.0"));
  EXPECT_FALSE(IsCollectiveEntry("Distributed.all_reduce.0.backward"));
  EXPECT_TRUE(IsCollectiveEntry("MintDistributed.all_reduce.3.forward"));
}

TEST(CollectivesTest, RankOutsideItsGroupIsAProblem) {
  std::vector<std::string> problems;
  ReadCollectives(Rows(Entry("Distributed.all_reduce.0.forward", kT,
                             "\"group\": " + Pg("[0, 1]"))),
                  7, &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("rank 7 is not in its group [0, 1]"),
            std::string::npos);
}

TEST(CollectivesTest, MsprobesOwnDumpHasAWorldAllReduce) {
  std::string path = std::string(LOCKSTEP_FIXTURES_DIR) +
                     "/msprobe/cross_framework/pytorch/dump.json";
  StatusOr<FlatDump> d = ReadFlatDump(path);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  std::vector<std::string> problems;
  std::vector<CollectiveCall> c = ReadCollectives(d->rows, 0, &problems);
  ASSERT_FALSE(c.empty());
  EXPECT_EQ(c[0].entry, "Distributed.all_reduce.0.forward");
  EXPECT_EQ(c[0].group, "world");
  EXPECT_TRUE(problems.empty());
}

CollectiveCall Call(const std::string& api, int n, CollectiveFlow flow,
                    int peer = -1) {
  CollectiveCall c;
  c.entry = "Distributed." + api + "." + std::to_string(n) + ".forward";
  c.api = api;
  c.flow = flow;
  c.peer = peer;
  c.data_arg = flow == CollectiveFlow::kRecv ? -1 : 0;
  c.data_kw = flow == CollectiveFlow::kRecv ? "" : "tensor";
  return c;
}

// A pipeline of 4 stages then an all_reduce: layers grow along the chain.
TEST(CollectiveLinksTest, PipelineLayersFollowTheChain) {
  std::vector<RankCollectives> comms(4);
  for (int r = 0; r < 4; ++r) {
    comms[r].step = 0;
    comms[r].rank = r;
    if (r > 0)
      comms[r].calls.push_back(Call("recv", 0, CollectiveFlow::kRecv, r - 1));
    if (r < 3)
      comms[r].calls.push_back(Call("send", 0, CollectiveFlow::kSend, r + 1));
    comms[r].calls.push_back(Call("all_reduce", 0, CollectiveFlow::kAll));
  }
  std::vector<std::string> warnings;
  CollectiveLinks l = LinkCollectives(comms, &warnings);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(l.ops.size(), 4u);  // three send/recv pairs, one all_reduce
  EXPECT_EQ(l.layer[0][0], 1);  // 0 -> 1
  EXPECT_EQ(l.layer[1][1], 2);  // 1 -> 2
  EXPECT_EQ(l.layer[2][1], 3);  // 2 -> 3
  EXPECT_EQ(l.layer[3][1], 4);  // the all_reduce, after the whole chain
  EXPECT_EQ(l.ops.back().members.size(), 4u);
}

TEST(CollectiveLinksTest, CallsThatDoNotLineUpWarnAndEnd) {
  std::vector<RankCollectives> comms(2);
  for (int r = 0; r < 2; ++r) {
    comms[r].step = 0;
    comms[r].rank = r;
  }
  // The two ranks make the same two calls in opposite orders: no run could
  // (each would wait for the other).
  comms[0].calls = {Call("all_reduce", 0, CollectiveFlow::kAll),
                    Call("barrier", 0, CollectiveFlow::kNone)};
  comms[1].calls = {Call("barrier", 0, CollectiveFlow::kNone),
                    Call("all_reduce", 0, CollectiveFlow::kAll)};
  std::vector<std::string> warnings;
  CollectiveLinks l = LinkCollectives(comms, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("do not line up"), std::string::npos);
  EXPECT_EQ(l.ops.size(), 2u);
}

// Rows of one entry on one rank: inputs with error `in`, outputs `out`.
void AddEntry(std::vector<CompareRow>* rows, int rank, const std::string& entry,
              double in, double out) {
  for (bool input : {true, false}) {
    CompareRow r;
    r.entry = entry;
    r.rank = rank;
    r.step = 0;
    std::string name = entry + (input ? ".input.0" : ".output.0");
    r.cells = PackedCells({name, name});
    r.is_input = input;
    r.is_output = !input;
    r.is_tensor = true;
    r.error = input ? in : out;
    r.floor = 0x1p-17;
    r.verdict = r.error > 1e-4      ? Verdict::kError
                : r.error > 0x1p-17 ? Verdict::kWarning
                                    : Verdict::kPass;
    double b = 1 + rank;  // distinct statistics per rank and side
    r.baseline_stats = {b, b / 2, b / 3, b * 4};
    r.target_stats = {b * (1 + r.error), b / 2, b / 3, b * 4};
    rows->push_back(r);
  }
}

std::vector<RankCollectives> AllReduceOn(int ranks) {
  std::vector<RankCollectives> comms(ranks);
  for (int r = 0; r < ranks; ++r)
    comms[r] = {0, r, {Call("all_reduce", 0, CollectiveFlow::kAll)}};
  return comms;
}

// Equal inputs on both ranks, different outputs: the collective itself.
TEST(RankOriginFallbackTest, CollectiveThatComputesDifferently) {
  std::vector<CompareRow> rows;
  for (int r = 0; r < 2; ++r) {
    AddEntry(&rows, r, "Functional.linear.0.forward", 0, 0);
    AddEntry(&rows, r, "Distributed.all_reduce.0.forward", 0, 0.01);
  }
  std::vector<std::string> warnings;
  FirstDivergence fd;
  RankOrigin o = FindRankOrigin(rows, {}, AllReduceOn(2), &warnings, &fd);
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 0);
  EXPECT_EQ(o.entry, "Distributed.all_reduce.0.forward");
  EXPECT_NE(o.detail.find("from equal inputs"), std::string::npos);
  ASSERT_EQ(o.path.size(), 1u);
  EXPECT_EQ(o.path[0].rank, 1);
  EXPECT_TRUE(fd.found);
}

// Rank 1 grows a small error op by op, each within what its inputs explain,
// until its all_reduce input differs: drift, from its earliest failing row.
TEST(RankOriginFallbackTest, DriftIntoACollective) {
  std::vector<CompareRow> rows;
  const double f = 0x1p-17;
  AddEntry(&rows, 0, "Functional.linear.0.forward", 0, 0);
  AddEntry(&rows, 0, "Functional.linear.1.forward", 0, 0);
  AddEntry(&rows, 0, "Distributed.all_reduce.0.forward", 0, 1e-3);
  AddEntry(&rows, 1, "Functional.linear.0.forward", 3 * f, 12 * f);
  AddEntry(&rows, 1, "Functional.linear.1.forward", 12 * f, 48 * f);
  AddEntry(&rows, 1, "Distributed.all_reduce.0.forward", 48 * f, 1e-3);
  // Rank 1's first input differs below what statistics show (else, in
  // runs identical up to it, that input would be the change).
  rows[6].target_stats = rows[6].baseline_stats;
  // The inputs come from the previous outputs (statistics match).
  rows[8].baseline_stats = rows[7].baseline_stats;
  rows[8].target_stats = rows[7].target_stats;
  rows[10].baseline_stats = rows[9].baseline_stats;
  rows[10].target_stats = rows[9].target_stats;
  std::vector<std::string> warnings;
  FirstDivergence fd;
  RankOrigin o = FindRankOrigin(rows, {}, AllReduceOn(2), &warnings, &fd);
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.rank, 1);
  EXPECT_EQ(o.entry, "Functional.linear.0.forward");
  EXPECT_TRUE(fd.drift);
  ASSERT_EQ(o.path.size(), 1u);
  EXPECT_EQ(o.path[0].rank, 0);
  EXPECT_EQ(o.path[0].from, 1);
}

}  // namespace
}  // namespace lockstep
