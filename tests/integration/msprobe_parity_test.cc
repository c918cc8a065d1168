// Reproduces msprobe HEAD's compare results shipped in
// tests/fixtures/msprobe/toy/out_*: every row, every cell, byte for byte
// (floats included: tensor metrics from the fused kernel, statistics diffs
// through lockstep's emulation of pandas' float parser). And the other way
// round: msprobe's compare of a dump lockstep's probe wrote (.pt files,
// tests/data/msprobe_pt) computes every metric, and lockstep's agree.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "lockstep/compare/comparator.h"
#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/pt_writer.h"
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

// A tensor-mode dump pair written by lockstep's Python probe (.pt files,
// every dtype it writes) and msprobe HEAD's compare of it
// (tests/data/msprobe_pt/make_fixture.py regenerates both).
const std::string kPtInterop =
    std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/msprobe_pt";
constexpr size_t kFirstMetric = 8;  // Cosine ... Five Thousandths Err Ratio
constexpr size_t kMetrics = 6;

// A cell that holds a number (not "unsupported", "N/A", "Nan", "None").
bool CellNumber(std::string_view cell, double* v) {
  std::string s(cell);
  char* end = nullptr;
  *v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(*v);
}

// msprobe loaded every .pt file lockstep wrote: all six metrics of every
// row are numbers, and lockstep's are the same numbers within
// 1e-12 + 1e-9 |msprobe| (msprobe prints 12 decimals; EucDist is its raw
// float64, whose summation order differs from lockstep's).
TEST(MsprobeReadsLockstepPtTest, EveryMetricComputedAndLockstepAgrees) {
  auto text = ReadFileToString(kPtInterop + "/msprobe_compare.csv");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto want = ParseCsv(*text);
  ASSERT_GE(want.size(), 40u);
  ASSERT_GT(want[0].size(), kFirstMetric + kMetrics);
  EXPECT_EQ(want[0][kFirstMetric], "Cosine");
  EXPECT_EQ(want[0][kFirstMetric + kMetrics - 1], "Five Thousandths Err Ratio");
  CompareResult r = RunCompare(kPtInterop + "/dumpB", kPtInterop + "/dumpA");
  EXPECT_EQ(r.columns, want[0]);
  ASSERT_EQ(r.rows.size() + 1, want.size());
  std::set<std::string> dtypes;
  int cells = 0, identical = 0;
  double worst = 0;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const auto& got = r.rows[i].cells;
    const auto& exp = want[i + 1];
    ASSERT_EQ(got[0], exp[0]) << "row " << i;
    dtypes.insert(exp[2]);
    for (size_t c = kFirstMetric; c < kFirstMetric + kMetrics; ++c) {
      double m = 0, l = 0;
      ASSERT_TRUE(CellNumber(exp[c], &m))
          << exp[0] << " " << want[0][c] << ": msprobe gave '" << exp[c] << "'";
      ASSERT_TRUE(CellNumber(got[c], &l))
          << exp[0] << " " << want[0][c] << ": lockstep gave '" << got[c]
          << "'";
      EXPECT_NEAR(l, m, 1e-12 + 1e-9 * std::fabs(m))
          << exp[0] << " " << want[0][c];
      ++cells;
      identical += got[c] == exp[c];
      worst = std::max(worst, std::fabs(l - m));
    }
  }
  EXPECT_EQ(dtypes.size(), 10u);  // f32 f16 bf16 f64 i64 i32 i16 i8 u8 bool
  std::printf("[I] %d metric cells, %d printed identically, max |diff| %g\n",
              cells, identical, worst);
}

// The fixture's files are what the pt writer writes now, byte for byte, so
// the test above speaks for the current writer.
TEST(MsprobeReadsLockstepPtTest, FixtureFilesAreThePtWritersBytes) {
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(kPtInterop)) {
    if (e.path().extension() != ".pt") continue;
    ++files;
    auto t = ReadTensorFile(e.path().string());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto bytes = ReadFileToString(e.path().string());
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(*bytes, *EncodePt(*t, e.path().stem().string())) << e.path();
  }
  EXPECT_EQ(files, 2 * 39);
}

}  // namespace
}  // namespace lockstep
