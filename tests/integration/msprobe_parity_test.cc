// Reproduces msprobe HEAD's compare results shipped in
// shared/fixtures/msprobe/toy/out_*: every row, every cell, byte for byte
// (floats included: tensor metrics from the fused kernel, statistics diffs
// through lockstep's emulation of pandas' float parser).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "lockstep/compare/comparator.h"
#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/report/csv.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
const std::string kToy = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy";
const std::string kQuick =
    std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/quick_start";

std::string FindFile(const std::string& dir, const std::string& name) {
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename() == name) return e.path().string();
  }
  return "";
}

CompareResult RunCompare(const std::string& target_dir,
                         const std::string& baseline_dir,
                         const std::string& stack_dir = "") {
  std::string tj = FindFile(target_dir, "dump.json");
  std::string bj = FindFile(baseline_dir, "dump.json");
  auto t = ReadDumpJson(tj);
  auto b = ReadDumpJson(bj);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(b.ok()) << b.status().ToString();
  std::string sp =
      FindFile(stack_dir.empty() ? target_dir : stack_dir, "stack.json");
  StatusOr<StackMap> stack =
      sp.empty() ? StatusOr<StackMap>(Status::NotFound("stack.json"))
                 : ReadStackJson(sp);
  CompareResult r;
  auto mode = DetectMode(*t, *b);
  EXPECT_TRUE(mode.ok()) << mode.status().ToString();
  r.mode = *mode;
  r.columns = CompareHeader(r.mode, stack.ok());
  DumpPair pair{&*t, &*b, stack.ok() ? &*stack : nullptr, 0, 0};
  CompareOptions opt;
  opt.jobs = 2;
  opt.load_tensor = ReadTensorFile;
  EXPECT_TRUE(CompareRankPair(pair, opt, &r).ok());
  FinishResult(&r);
  return r;
}

void ExpectMatchesCsv(const CompareResult& r, const std::string& csv_dir) {
  std::string path;
  for (const auto& e : fs::directory_iterator(csv_dir)) {
    if (e.path().extension() == ".csv") path = e.path().string();
  }
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  auto want = ParseCsv(*text);
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(r.columns, want[0]);
  ASSERT_EQ(r.rows.size() + 1, want.size()) << path;
  int bad = 0;
  for (size_t i = 0; i < r.rows.size() && bad < 10; ++i) {
    const auto& got = r.rows[i].cells;
    const auto& exp = want[i + 1];
    ASSERT_EQ(got.size(), exp.size()) << "row " << i;
    for (size_t c = 0; c < got.size(); ++c) {
      if (got[c] != exp[c]) {
        ++bad;
        ADD_FAILURE() << "row " << i << " (" << exp[0] << ") column '"
                      << want[0][c] << "': got [" << got[c] << "] want ["
                      << exp[c] << "]";
      }
    }
  }
}

class ParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found at " << kToy;
  }
};

TEST_F(ParityTest, TensorModeFp16Rounding) {
  ExpectMatchesCsv(RunCompare(kToy + "/dumpB", kToy + "/dumpA"),
                   kToy + "/out_tensor");
}
TEST_F(ParityTest, TensorModeNanInf) {
  ExpectMatchesCsv(RunCompare(kToy + "/tensC", kToy + "/dumpA"),
                   kToy + "/out_tensC");
}
TEST_F(ParityTest, StatisticsMode) {
  ExpectMatchesCsv(RunCompare(kToy + "/statB", kToy + "/statA"),
                   kToy + "/out_stat");
}
TEST_F(ParityTest, StatisticsModeNanInf) {
  ExpectMatchesCsv(RunCompare(kToy + "/statC", kToy + "/statA"),
                   kToy + "/out_statC");
}
TEST_F(ParityTest, Md5Mode) {
  ExpectMatchesCsv(RunCompare(kToy + "/md5B", kToy + "/md5A"),
                   kToy + "/out_md5");
}
TEST_F(ParityTest, UnmatchedAndDtypeGate) {
  ExpectMatchesCsv(
      RunCompare(kToy + "/unmatched/npu", kToy + "/unmatched/bench"),
      kToy + "/out_unmatched");
}
TEST_F(ParityTest, QuickStartStep1VsStep0) {
  CompareResult r =
      RunCompare(kQuick + "/step1", kQuick + "/step0", kQuick + "/step0");
  EXPECT_EQ(r.rows.size(), 2822u);
  EXPECT_EQ(r.summary.msprobe_pass, 2696);
  EXPECT_EQ(r.summary.msprobe_warning, 62);
  EXPECT_EQ(r.summary.msprobe_error, 64);
  // lockstep does not call the 161 unmatched parameter gradients "pass".
  EXPECT_EQ(r.summary.unmatched, 161);
  ExpectMatchesCsv(r, kToy + "/out_summary");
}

}  // namespace
}  // namespace lockstep
