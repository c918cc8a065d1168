// Runs `lockstep curve` as a user would: exit codes, verdict line, outputs.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "testing/run_lockstep.h"

namespace {

namespace fs = std::filesystem;

using lockstep::testing::CmdRun;

CmdRun Exec(const std::string& args) {
  return lockstep::testing::RunLockstep(args);
}

class CurveCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(LOCKSTEP_BIN_DIR) / "curve_cli_test_out" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

TEST_F(CurveCliTest, ListedInHelp) {
  CmdRun r = Exec("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("  curve "), std::string::npos) << r.out;
}

TEST_F(CurveCliTest, UsageErrorsExit2BeforeReading) {
  std::string a = Write("a.csv", "step,loss\n1,1.0\n");
  struct Case {
    std::string args, says;
  } cases[] = {
      {a, "needs 2 or more logs"},
      {a + " " + a + " --smooth 1", "--smooth 1"},
      {a + " " + a + " --smooth -0.5", "--smooth -0.5"},
      {a + " " + a + " --tol-abs -1", "--tol-abs -1"},
      {a + " " + a + " --tol-rel -2", "--tol-rel -2"},
      {a + " " + a + " --format xml", "--format xml"},
      {a + " " + a + " --no-such-option", "curve"},
  };
  for (const auto& c : cases) {
    CmdRun r = Exec("curve " + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("[E] "), std::string::npos) << r.out;
  }
}

TEST_F(CurveCliTest, JsonPathIsCheckedBeforeReading) {
  std::string a = Write("a.csv", "step,loss\n1,1.0\n");
  CmdRun r = Exec("curve " + a + " " + a + " --json /nonexistent/x.json");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("cannot write there: /nonexistent"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
}

// docs/curve.md's example in a fresh directory: the JSON goes inside -o's
// directory, which does not exist yet.
TEST_F(CurveCliTest, JsonInsideTheOutputDirectoryBeforeItExists) {
  std::string a = Write("a.csv", "step,loss\n1,1.0\n2,0.9\n");
  std::string out = (dir_ / "fresh" / "curves_out").string();
  fs::remove_all(dir_ / "fresh");
  CmdRun r = Exec("curve " + a + " " + a + " -o " + out + " --json " + out +
                  "/curve.json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out + "/curve.json"));
  EXPECT_TRUE(fs::exists(out + "/curve.html"));
}

TEST_F(CurveCliTest, UnreadableLogExits3) {
  std::string a = Write("a.csv", "step,loss\n1,1.0\n");
  CmdRun r = Exec("curve " + a + " " + (dir_ / "missing.csv").string());
  EXPECT_EQ(r.code, 3) << r.out;
}

// Needs the readers; skipped while readers.h is the stub.
TEST_F(CurveCliTest, CsvEndToEnd) {
  std::string a = Write("a.csv", "step,loss\n1,2.0\n2,1.5\n3,1.2\n4,1.0\n");
  std::string b = Write("b.csv", "step,loss\n1,2.0\n2,1.5\n3,1.3\n4,1.0\n");
  CmdRun same = Exec("curve " + a + " " + a);
  if (same.out.find("not built yet") != std::string::npos) {
    GTEST_SKIP() << "curve log readers not built yet";
  }
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("PASS: loss curves agree over 4 common steps"),
            std::string::npos)
      << same.out;
  std::string out = (dir_ / "report").string();
  std::string json = (dir_ / "curve.json").string();
  CmdRun diff = Exec("curve " + a + " " + b + " --tol-abs 0.05 -o " + out +
                     " --json " + json);
  EXPECT_EQ(diff.code, 1) << diff.out;
  EXPECT_NE(diff.out.find("FAIL: loss diverges at step 3"), std::string::npos)
      << diff.out;
  EXPECT_TRUE(fs::exists(out + "/curve.svg"));
  EXPECT_TRUE(fs::exists(out + "/curve.html"));
  EXPECT_TRUE(fs::exists(json));
  CmdRun loose = Exec("curve " + a + " " + b + " --tol-abs 0.2");
  EXPECT_EQ(loose.code, 0) << loose.out;
  CmdRun metric = Exec("curve " + a + " " + b + " --metric grad_norm");
  EXPECT_EQ(metric.code, 2) << metric.out;
  EXPECT_NE(metric.out.find("'grad_norm'"), std::string::npos) << metric.out;
}

}  // namespace
