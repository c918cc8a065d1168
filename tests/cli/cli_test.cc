// Runs the lockstep binary as a user would and checks exit codes and output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/run_lockstep.h"

namespace {

namespace fs = std::filesystem;
const std::string kFix = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";

using lockstep::testing::CmdRun;

CmdRun Exec(const std::string& args) {
  return lockstep::testing::RunLockstep(args);
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kFix)) GTEST_SKIP() << "fixtures not found: " << kFix;
  }
};

TEST_F(CliTest, HelpAndUsageErrors) {
  CmdRun r = Exec("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("compare"), std::string::npos);
  EXPECT_EQ(Exec("").code, 2);
  EXPECT_EQ(Exec("frobnicate").code, 2);
  EXPECT_EQ(Exec("inspect").code, 2);
  EXPECT_EQ(Exec("inspect --help").code, 0);
  EXPECT_EQ(Exec("overflow --no-such-flag x").code, 2);
}

TEST_F(CliTest, InspectQuickStart) {
  CmdRun r = Exec("inspect " + kFix + "/quick_start");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("entries 760"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rows 2822"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("step 1 rank 0"), std::string::npos) << r.out;
}

// The kinds of entries add up to the entries: msprobe's toy dump holds a
// parameters_grad entry beside 4 forward and 3 backward ones.
TEST_F(CliTest, InspectEntryKindsAddUp) {
  CmdRun r = Exec("inspect " + std::string(LOCKSTEP_SOURCE_DIR) +
                  "/examples/msprobe_toy/target");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("entries 8 (forward 4, backward 3, parameters_grad 1)"),
            std::string::npos)
      << r.out;
}

TEST_F(CliTest, InspectMissingPathIsIoError) {
  CmdRun r = Exec("inspect /nonexistent/lockstep_dump");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.out.find("[E] /nonexistent/lockstep_dump"), std::string::npos)
      << r.out;
}

TEST_F(CliTest, OverflowFindsInjectedNan) {
  CmdRun r = Exec("overflow " + kFix + "/toy/statC");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("first: Tensor.__mul__.0.forward"), std::string::npos)
      << r.out;
  CmdRun clean = Exec("overflow " + kFix + "/toy/statA");
  EXPECT_EQ(clean.code, 0) << clean.out;
}

TEST_F(CliTest, CompareWritesReportsAndExitsOneOnDivergence) {
  std::string out = ::testing::TempDir() + "lockstep_cli_compare";
  fs::remove_all(out);
  CmdRun r = Exec("compare " + kFix + "/toy/dumpB " + kFix + "/toy/dumpA -o " +
                  out + " --xlsx");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FIRST DIVERGENCE: Functional.relu.0.forward"),
            std::string::npos)
      << r.out;
  int csv = 0, xlsx = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    csv += e.path().extension() == ".csv";
    xlsx += e.path().extension() == ".xlsx";
  }
  EXPECT_EQ(csv, 1);
  EXPECT_EQ(xlsx, 1);
  EXPECT_TRUE(fs::exists(out + "/summary.json"));
  EXPECT_TRUE(fs::exists(out + "/report.html"));
  fs::remove_all(out);
}

TEST_F(CliTest, CompareIdenticalRunsExitsZero) {
  std::string out = ::testing::TempDir() + "lockstep_cli_same";
  CmdRun r =
      Exec("compare " + kFix + "/toy/dumpA " + kFix + "/toy/dumpA -o " + out);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  fs::remove_all(out);
}

TEST_F(CliTest, CompareBadInput) {
  std::string out = ::testing::TempDir() + "lockstep_cli_bad";
  // -o defaults to ./output (msprobe's): missing inputs are an I/O error,
  // said before any output directory is made.
  fs::path cwd = fs::path(::testing::TempDir()) / "lockstep_cli_bad_cwd";
  fs::create_directories(cwd);
  CmdRun ab =
      lockstep::testing::RunCommand("cd " + cwd.string() + " && " +
                                    LOCKSTEP_BIN_DIR + "/lockstep compare a b");
  EXPECT_EQ(ab.code, 3) << ab.out;
  EXPECT_NE(ab.out.find("[E] a: no such file"), std::string::npos) << ab.out;
  EXPECT_FALSE(fs::exists(cwd / "output"));
  fs::remove_all(cwd);
  EXPECT_EQ(Exec("compare " + kFix + "/toy/dumpA " + kFix + "/toy/dumpA -o " +
                 out + " --mode bogus")
                .code,
            2);
  EXPECT_EQ(Exec("compare " + kFix + "/toy/dumpA " + kFix + "/toy/dumpA -o " +
                 out + " --align --fuzzy-match")
                .code,
            2);
  CmdRun missing =
      Exec("compare /nonexistent/x " + kFix + "/toy/dumpA -o " + out);
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.out.find("/nonexistent/x"), std::string::npos);
  // Task mismatch (tensor vs statistics) is a usage problem with a note.
  CmdRun mixed =
      Exec("compare " + kFix + "/toy/dumpA " + kFix + "/toy/statA -o " + out);
  EXPECT_EQ(mixed.code, 2) << mixed.out;
  EXPECT_NE(mixed.out.find("--mode"), std::string::npos) << mixed.out;
  fs::remove_all(out);
}

TEST_F(CliTest, CompareEmbedsLossCurvesWhenGivenBothLogs) {
  std::string out = ::testing::TempDir() + "lockstep_cli_curves";
  std::string src = LOCKSTEP_SOURCE_DIR;
  std::string dumps = kFix + "/toy/dumpB " + kFix + "/toy/dumpA -o " + out;
  CmdRun one = Exec("compare " + dumps + " --target-log " + src +
                    "/examples/curves/target.csv");
  EXPECT_EQ(one.code, 2) << one.out;
  CmdRun bad = Exec("compare " + dumps + " --target-log /nonexistent.csv" +
                    " --baseline-log " + src + "/examples/curves/baseline.csv");
  EXPECT_EQ(bad.code, 3) << bad.out;
  CmdRun r = Exec("compare " + dumps + " --target-log " + src +
                  "/examples/curves/target.csv --baseline-log " + src +
                  "/examples/curves/baseline.csv");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("curves: FAIL: loss diverges at step"),
            std::string::npos)
      << r.out;
  std::ifstream in(out + "/report.html");
  std::stringstream html;
  html << in.rdbuf();
  EXPECT_NE(html.str().find("<section id=\"curves\""), std::string::npos);
  fs::remove_all(out);
}

TEST_F(CliTest, CurveOnRealLogs) {
  std::string meg = std::string(LOCKSTEP_FIXTURES_DIR) + "/megatron";
  std::string log;
  for (const auto& e : fs::directory_iterator(meg)) log = e.path().string();
  CmdRun same = Exec("curve " + log + " " + log);
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("PASS: loss curves agree over 19 common steps"),
            std::string::npos)
      << same.out;
  std::string ts = std::string(LOCKSTEP_FIXTURES_DIR) + "/trainer_state/";
  CmdRun diff = Exec("curve " + ts + "Dheena731__tinyLlama-finetune__1.json " +
                     ts + "AriesChen-UPC__GeoLLM__1.json --tol-rel 0.05");
  EXPECT_EQ(diff.code, 1) << diff.out;
}

}  // namespace
