// Writing only what belongs to us in `-o`: runs never mix their files,
// never write through a planted symbolic link, and never run at once.
#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lockstep/core/file.h"
#include "testing/run_lockstep.h"
#include "testing/test_dir.h"

namespace {

namespace fs = std::filesystem;
using lockstep::testing::CmdRun;
using lockstep::testing::Slurp;

const std::string kToy =
    std::string(LOCKSTEP_SOURCE_DIR) + "/examples/msprobe_toy/";

class OutputDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = lockstep::testing::FreshTestDir("lockstep_output_dir_");
    fs::create_directories(dir_ + "out");
  }
  void TearDown() override { fs::remove_all(dir_); }
  CmdRun Compare() {
    return lockstep::testing::RunLockstep("compare " + kToy + "target " + kToy +
                                          "baseline -o " + dir_ + "out");
  }
  int Csvs() {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_ + "out"))
      n += e.path().extension() == ".csv";
    return n;
  }
  std::string dir_;
};

TEST_F(OutputDirTest, TwoRunsInOneSecondKeepTheirOwnCsvs) {
  // Runs a second apart can't be told by their timestamps: whatever the
  // second, three runs leave three CSVs, each named in its run's log.
  std::string logs;
  for (int i = 0; i < 3; ++i) {
    CmdRun r = Compare();
    ASSERT_EQ(r.code, 1) << r.out;  // the toy pair differs
    logs += r.out;
  }
  EXPECT_EQ(Csvs(), 3);
  for (const auto& e : fs::directory_iterator(dir_ + "out")) {
    if (e.path().extension() == ".csv") {
      EXPECT_NE(logs.find("wrote " + e.path().string()), std::string::npos)
          << e.path();
    }
  }
}

TEST_F(OutputDirTest, AnEarlierRunsCsvOfTheSameSecondIsKept) {
  // Another run's CSVs under every name this run could pick in the next
  // ten seconds.
  std::time_t now = std::time(nullptr);
  std::vector<std::string> taken;
  for (int s = 0; s < 10; ++s) {
    std::time_t t = now + s;
    std::tm tm{};
    localtime_r(&t, &tm);
    char ts[32];
    std::strftime(ts, sizeof(ts), "%Y%m%d%H%M%S", &tm);
    taken.push_back(dir_ + "out/compare_result_" + ts + ".csv");
    std::ofstream(taken.back()) << "the other run";
  }
  CmdRun r = Compare();
  ASSERT_EQ(r.code, 1) << r.out;
  for (const auto& t : taken) EXPECT_EQ(Slurp(t), "the other run") << t;
  EXPECT_EQ(Csvs(), 11);
  EXPECT_NE(r.out.find(".csv"), std::string::npos);
  EXPECT_NE(r.out.find("_2.csv"), std::string::npos) << r.out;
}

TEST_F(OutputDirTest, ReplacedSummaryAndReportAreSaidSo) {
  ASSERT_EQ(Compare().code, 1);
  CmdRun second = Compare();
  EXPECT_NE(second.out.find("replacing the summary.json and report.html of "
                            "an earlier run"),
            std::string::npos)
      << second.out;
}

TEST_F(OutputDirTest, TableFileOfAnEarlierLargeReportIsReplacedAndRemoved) {
  // An earlier run's report kept its table beside the page; this small
  // report embeds its table, so that file would describe another run.
  ASSERT_EQ(Compare().code, 1);
  std::ofstream(dir_ + "out/report_table.js") << "window.lockstepTable = 0;";
  CmdRun r = Compare();
  ASSERT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("replacing the summary.json, report.html and "
                       "report_table.js of an earlier run"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir_ + "out/report_table.js"));
  EXPECT_NE(r.out.find("wrote " + dir_ + "out/summary.json and " + dir_ +
                       "out/report.html"),
            std::string::npos)
      << r.out;
}

TEST_F(OutputDirTest, TwoRunsNeverWriteOneDirectoryAtOnce) {
  // Another run holds the directory: this one refuses before comparing.
  auto lock = lockstep::DirLock::Acquire(dir_ + "out");
  ASSERT_TRUE(lock.ok());
  CmdRun r = Compare();
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("another lockstep run is writing to this directory"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(Csvs(), 0);
  EXPECT_FALSE(fs::exists(dir_ + "out/summary.json"));
}

TEST_F(OutputDirTest, PlantedLinksInTheOutputAreNeverWrittenThrough) {
  // Links at every name a run writes, and at the temporary names of earlier
  // versions, all pointing at one file outside `-o`.
  std::string outside = dir_ + "outside.txt";
  std::ofstream(outside) << "precious";
  int pid_guess = 0;  // earlier versions used "<name>.tmp.<pid>"
  for (const char* f :
       {"summary.json", "report.html", "report_table.js", ".lockstep.lock"})
    fs::create_symlink(outside, dir_ + "out/" + f);
  for (pid_guess = 1; pid_guess < 64; ++pid_guess) {
    fs::create_symlink(
        outside, dir_ + "out/summary.json.tmp." + std::to_string(pid_guess));
  }
  CmdRun r = Compare();
  EXPECT_EQ(Slurp(outside), "precious");
  // The lock file is a link: the run refuses rather than follow it.
  EXPECT_EQ(r.code, 3) << r.out;
  fs::remove(dir_ + "out/.lockstep.lock");
  r = Compare();
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(Slurp(outside), "precious");
  EXPECT_FALSE(fs::is_symlink(dir_ + "out/summary.json"));
  EXPECT_FALSE(fs::is_symlink(dir_ + "out/report.html"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_ + "out/report_table.js")));
}

// Issue 32: after kill -9 mid-write, *.csv.tmp.* files stayed behind. A run
// into the same folder removes what an interrupted run left, says so, and
// writes summary.json only once its CSV is whole.
TEST_F(OutputDirTest, RerunAfterKillMinus9CleansUpTempFiles) {
  const std::string out = dir_ + "out/";
  const std::vector<std::string> stale = {
      "compare_result_20250101000000.csv.tmp.4242.0.0123456789abcdef",
      "summary.json.tmp.4242.1.fedcba9876543210"};
  for (const std::string& f : stale) std::ofstream(out + f) << "half a row,";
  // Names that only look alike stay.
  const std::vector<std::string> kept = {"notes.tmp.txt", "x.tmp.1.2.3"};
  for (const std::string& f : kept) std::ofstream(out + f) << "mine";
  CmdRun r = Compare();
  ASSERT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("removed 2 temporary file(s) of an interrupted run"),
            std::string::npos)
      << r.out;
  for (const std::string& f : stale) EXPECT_FALSE(fs::exists(out + f)) << f;
  for (const std::string& f : kept) EXPECT_TRUE(fs::exists(out + f)) << f;
  EXPECT_EQ(Csvs(), 1);
  // summary.json is the last file written: it is never older than a CSV.
  for (const auto& e : fs::directory_iterator(out)) {
    if (e.path().extension() == ".csv") {
      EXPECT_LE(fs::last_write_time(e.path()),
                fs::last_write_time(out + "summary.json"));
    }
  }
  CmdRun again = Compare();
  EXPECT_EQ(again.out.find("temporary file"), std::string::npos) << again.out;
}

}  // namespace
