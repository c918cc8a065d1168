// Never a false PASS: runs that lack something the baseline has, or cannot
// be compared as asked, must not exit 0 — each case once passed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "testing/run_lockstep.h"

namespace {

namespace fs = std::filesystem;
const std::string kToy = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy";

using lockstep::testing::CmdRun;

class FalsePassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
    dir_ = ::testing::TempDir() + "lockstep_false_pass_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() +
           "/";
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A rank dir `rel` (under dir_) holding a copy of a toy dump's dump.json.
  std::string Rank(const std::string& rel, const std::string& toy) {
    fs::path to = dir_ + rel;
    fs::create_directories(to);
    for (const auto& e : fs::recursive_directory_iterator(kToy + "/" + toy)) {
      if (e.path().filename() == "dump.json") {
        fs::copy_file(e.path(), to / "dump.json");
        break;
      }
    }
    return to.string();
  }

  CmdRun Compare(const std::string& target, const std::string& baseline,
                 const std::string& flags = "") {
    return lockstep::testing::RunLockstep("compare " + target + " " + baseline +
                                          " -o " + dir_ + "out " + flags);
  }

  std::string dir_;
};

TEST_F(FalsePassTest, OpsInTheBaselineOnlyFail) {
  // statC calls Tensor.__mul__ where statA does not: comparing statA (the
  // target) against statC leaves that entry missing from the target.
  for (const char* flags : {"", "--no-align", "--align"}) {
    CmdRun r = Compare(kToy + "/statA", kToy + "/statC", flags);
    EXPECT_EQ(r.code, 1) << flags << "\n" << r.out;
    EXPECT_NE(r.out.find("FAIL"), std::string::npos) << flags << r.out;
    EXPECT_NE(r.out.find("missing from target: Tensor.__mul__.0.forward"),
              std::string::npos)
        << flags << "\n"
        << r.out;
  }
}

TEST_F(FalsePassTest, EmptyDumpIsAnError) {
  std::string empty = dir_ + "empty";
  fs::create_directories(empty);
  std::ofstream(empty + "/dump.json")
      << R"({"task": "statistics", "level": "L1", "dump_data_dir": null,)"
         R"( "data": {}})";
  CmdRun r = Compare(empty, kToy + "/statA");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no entries"), std::string::npos) << r.out;
  EXPECT_EQ(Compare(kToy + "/statA", empty).code, 2);
}

TEST_F(FalsePassTest, Md5ModeWithoutCrcsIsRefused) {
  CmdRun r = Compare(kToy + "/statA", kToy + "/statA", "--mode md5");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no md5 (CRC-32) values"), std::string::npos) << r.out;
  EXPECT_EQ(Compare(kToy + "/md5A", kToy + "/md5A", "--mode md5").code, 0);
}

TEST_F(FalsePassTest, StepsMissingFromTheTargetFail) {
  Rank("t/step0/rank0", "statA");
  Rank("b/step0/rank0", "statA");
  Rank("b/step1/rank0", "statA");
  Rank("b/step2/rank0", "statA");
  CmdRun r = Compare(dir_ + "t", dir_ + "b");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL: the target lacks steps 1, 2 of the baseline"),
            std::string::npos)
      << r.out;
  // The other way round the extra steps are a warning, not a failure of
  // what was compared.
  CmdRun back = Compare(dir_ + "b", dir_ + "t");
  EXPECT_NE(back.out.find("step 1 is in the target only"), std::string::npos)
      << back.out;
}

TEST_F(FalsePassTest, RanksMissingOrUnreadableFail) {
  // A crashed 3-rank run: rank 1 never wrote its dump, rank 2's is cut.
  for (const char* r : {"0", "1", "2"})
    Rank(std::string("b/step0/rank") + r, "statA");
  Rank("t/step0/rank0", "statA");
  std::string cut = Rank("t/step0/rank2", "statA") + "/dump.json";
  fs::resize_file(cut, fs::file_size(cut) / 2);
  CmdRun r = Compare(dir_ + "t", dir_ + "b");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL: no comparison for step 0 rank 1 (not in the "
                       "target), step 0 rank 2 (unreadable)"),
            std::string::npos)
      << r.out;
  std::ifstream summary(dir_ + "out/summary.json");
  std::string json((std::istreambuf_iterator<char>(summary)), {});
  EXPECT_NE(json.find(R"("missing_ranks":[{"step":0,"rank":1,"why":"not in )"
                      R"(the target"},{"step":0,"rank":2,"why":"unreadable: )"),
            std::string::npos)
      << json;
}

TEST_F(FalsePassTest, UnfinishedLastStepIsSkippedWithAWarning) {
  // A run killed in step 1: its rank dir has no dump.json yet.
  Rank("t/step0/rank0", "statA");
  fs::create_directories(dir_ + "t/step1/rank0");
  std::ofstream(dir_ + "t/step1/rank0/stack.json") << "{}";
  Rank("b/step0/rank0", "statA");
  Rank("b/step1/rank0", "statA");
  CmdRun inspect = lockstep::testing::RunLockstep("inspect " + dir_ + "t");
  EXPECT_EQ(inspect.code, 0) << inspect.out;
  EXPECT_NE(inspect.out.find("step1/rank0 has no dump.json"), std::string::npos)
      << inspect.out;
  CmdRun overflow = lockstep::testing::RunLockstep("overflow " + dir_ + "t");
  EXPECT_EQ(overflow.code, 0) << overflow.out;
  CmdRun r = Compare(dir_ + "t", dir_ + "b");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("the target lacks step 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unfinished step"), std::string::npos) << r.out;
}

}  // namespace
