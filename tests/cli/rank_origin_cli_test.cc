// `lockstep compare` on dumps of several ranks names the origin across
// ranks: in the terminal, in summary.json ("origin") and in the HTML report
// (the "Across ranks" card with its heat grid).
#include <gtest/gtest.h>

#include <string>

#include "testing/rank_dumps.h"
#include "testing/run_lockstep.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

using testing::Phase;
using testing::RankProgram;

RankProgram DataParallel(int fault_rank) {
  return testing::DataParallelProgram(8, fault_rank);
}

TEST(RankOriginCliTest, NamesTheFaultedRankEverywhere) {
  std::string dir = testing::FreshTestDir("rank_origin_cli_");
  testing::WriteRankDumps(DataParallel(5), dir);
  testing::CmdRun r = testing::RunLockstep("compare " + dir + "target " + dir +
                                           "baseline -o " + dir + "out");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("[W] origin: rank 5, step 0, "
                       "Functional.linear.1.forward (precision); reached "
                       "ranks 0..4, 6, 7 through "
                       "Distributed.all_reduce.0.forward from rank 5"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("FAIL: first divergence at Functional.linear.1.forward "
                       "(rank 5, step 0)"),
            std::string::npos)
      << r.out;
  std::string summary = testing::Slurp(dir + "out/summary.json");
  EXPECT_NE(summary.find("\"origin\":{\"rank\":5,\"step\":0,\"entry\":"
                         "\"Functional.linear.1.forward\",\"reason\":"
                         "\"precision\""),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("{\"rank\":0,\"step\":0,\"entry\":\"Distributed."
                         "all_reduce.0.forward\",\"from\":5}"),
            std::string::npos)
      << summary;
  std::string html = testing::Slurp(dir + "out/report.html");
  EXPECT_NE(html.find("id=\"rank-heat\""), std::string::npos);
  EXPECT_NE(html.find("class=\"hc v-error origin\""), std::string::npos);
  EXPECT_NE(html.find("title=\"rank 5, step 0: error"), std::string::npos);
}

TEST(RankOriginCliTest, NoFaultPassesWithNullOrigin) {
  std::string dir = testing::FreshTestDir("rank_origin_cli_");
  testing::WriteRankDumps(DataParallel(-1), dir);
  testing::CmdRun r = testing::RunLockstep("compare " + dir + "target " + dir +
                                           "baseline -o " + dir + "out");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("origin:"), std::string::npos) << r.out;
  std::string summary = testing::Slurp(dir + "out/summary.json");
  EXPECT_NE(summary.find("\"origin\":null"), std::string::npos) << summary;
}

// One rank: no origin across ranks, and summary.json as before (no key).
TEST(RankOriginCliTest, OneRankHasNoOriginKey) {
  std::string dir = testing::FreshTestDir("rank_origin_cli_");
  testing::WriteRankDumps(DataParallel(-1), dir);
  testing::CmdRun r =
      testing::RunLockstep("compare " + dir + "target/step0/rank3 " + dir +
                           "baseline/step0/rank3 -o " + dir + "out");
  EXPECT_EQ(r.code, 0) << r.out;
  std::string summary = testing::Slurp(dir + "out/summary.json");
  EXPECT_EQ(summary.find("\"origin\""), std::string::npos) << summary;
  EXPECT_EQ(testing::Slurp(dir + "out/report.html").find("id=\"ranks\""),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
