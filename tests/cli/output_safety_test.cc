// Output safety: names from a user's dump can't run as spreadsheet formulas
// in the CSV, nor drive the terminal (clear it, draw a fake verdict line).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testing/run_lockstep.h"
#include "testing/test_dir.h"

namespace {

namespace fs = std::filesystem;
using lockstep::testing::CmdRun;
using lockstep::testing::Slurp;

const std::string kToy = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy";

class OutputSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
    dir_ = lockstep::testing::FreshTestDir("lockstep_output_safety_");
    fs::create_directories(dir_ + "t");
    // statA with its relu entry renamed by a hostile writer.
    std::string json;
    for (const auto& e : fs::recursive_directory_iterator(kToy + "/statA")) {
      if (e.path().filename() == "dump.json") json = Slurp(e.path());
      if (e.path().filename() == "dump.json") baseline_ = e.path().string();
    }
    size_t at = json.find("\"Functional.relu.0.forward\"");
    ASSERT_NE(at, std::string::npos);
    json.replace(at, std::string("\"Functional.relu.0.forward\"").size(),
                 std::string("\"=HYPERLINK(\\\"http://x\\\")\\u001b[2J\\nPASS: "
                             "all pass.0.forward\""));
    std::ofstream(dir_ + "t/dump.json") << json;
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  std::string dir_, baseline_;
};

TEST_F(OutputSafetyTest, CsvCellsThatWouldRunAsFormulasAreNeutralised) {
  CmdRun r = lockstep::testing::RunLockstep("compare " + dir_ + "t " +
                                            baseline_ + " -o " + dir_ + "out");
  ASSERT_EQ(r.code, 1) << r.out;
  std::string csv;
  for (const auto& e : fs::directory_iterator(dir_ + "out"))
    if (e.path().extension() == ".csv") csv = Slurp(e.path());
  EXPECT_NE(csv.find("\"'=HYPERLINK"), std::string::npos) << csv;
  EXPECT_EQ(csv.find(",=HYPERLINK"), std::string::npos);
  EXPECT_EQ(csv.find(",\"=HYPERLINK"), std::string::npos);
}

TEST_F(OutputSafetyTest, ControlCharactersFromNamesArePrintedEscaped) {
  CmdRun r = lockstep::testing::RunLockstep("compare " + dir_ + "t " +
                                            baseline_ + " -o " + dir_ + "out");
  ASSERT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_NE(r.out.find("\\x1b[2J\\x0aPASS: all pass"), std::string::npos)
      << r.out;
  // No line of the output starts with the planted verdict.
  EXPECT_EQ(r.out.find("\nPASS: all pass"), std::string::npos) << r.out;
  CmdRun overflow = lockstep::testing::RunLockstep("overflow " + dir_ + "t");
  EXPECT_EQ(overflow.out.find('\x1b'), std::string::npos) << overflow.out;
  CmdRun inspect = lockstep::testing::RunLockstep("inspect " + dir_ + "t");
  EXPECT_EQ(inspect.out.find('\x1b'), std::string::npos) << inspect.out;
}

}  // namespace
