// Progress of a statistics compare as a user sees it on a terminal (the
// command runs under script(1), which gives it a pseudo-terminal): a bar
// for reading the two dump.json files, in MB, then one for the rows.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "testing/run_lockstep.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

using testing::FreshTestDir;
using testing::RunCommand;

TEST(ProgressCliTest, StatisticsCompareShowsReadingAndRowsOnATerminal) {
  if (RunCommand("script --version").code != 0)
    GTEST_SKIP() << "script(1) not installed (util-linux)";
  std::string qs = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/quick_start";
  std::string out = FreshTestDir("progress_cli");
  std::string cmd = std::string(LOCKSTEP_BIN_DIR) + "/lockstep compare " + qs +
                    "/step1/proc2016/dump.json " + qs +
                    "/step0/proc2016/dump.json -o " + out + "/o";
  testing::CmdRun r =
      RunCommand("script -qec '" + cmd + "' /dev/null < /dev/null");
  ASSERT_LE(r.code, 1) << r.out;  // 1: the steps differ (FAIL)
  // The last drawing of each bar is its end: all of it done.
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\[I\] compare: reading dump.json \[#{24}\] )"
                        R"(([1-9][0-9]*)/\1 MB 100%)")))
      << r.out;
  EXPECT_NE(r.out.find("[I] compare [########################] 2822/2822 "
                       "rows 100%"),
            std::string::npos)
      << r.out;
  // Off a terminal a run this short prints no progress at all.
  testing::CmdRun plain = RunCommand(cmd + " < /dev/null");
  EXPECT_EQ(plain.out.find("rows 100%"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("reading dump.json"), std::string::npos)
      << plain.out;
}

}  // namespace
}  // namespace lockstep
