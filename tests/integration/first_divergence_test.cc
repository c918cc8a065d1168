// End to end: synthetic runs with one injected fault, dumped, compared; the
// first divergent operator and its reason must be the injected one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "lockstep/compare/compare_dumps.h"
#include "testing/synthetic_run.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::Fault;
using testing::SyntheticOpName;
using testing::SyntheticRun;
using testing::WriteSyntheticRun;

class FirstDivergenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lockstep_fd_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes baseline and target runs; returns the compare result.
  CompareResult Compare(const SyntheticRun& target,
                        const SyntheticRun& baseline,
                        CompareOptions options = {}) {
    std::string t = (dir_ / "target/step0/rank0").string();
    std::string b = (dir_ / "baseline/step0/rank0").string();
    EXPECT_TRUE(WriteSyntheticRun(target, t).ok());
    EXPECT_TRUE(WriteSyntheticRun(baseline, b).ok());
    options.jobs = 2;
    StatusOr<CompareResult> r = CompareDumpPaths(
        (dir_ / "target").string(), (dir_ / "baseline").string(), options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : CompareResult();
  }

  fs::path dir_;
};

SyntheticRun Faulty(Fault f, int op, const char* task = "tensor") {
  SyntheticRun r;
  r.fault = f;
  r.fault_op = op;
  r.task = task;
  return r;
}

TEST_F(FirstDivergenceTest, IdenticalRunsAllPass) {
  CompareResult r = Compare(SyntheticRun{}, SyntheticRun{});
  EXPECT_EQ(r.mode, CompareMode::kTensor);
  EXPECT_EQ(r.summary.rows, 16);
  EXPECT_EQ(r.summary.pass, 16);
  EXPECT_FALSE(r.first_divergence.found);
}

struct Case {
  Fault fault;
  const char* task;
  DivergenceReason reason;
};

class FaultKinds : public FirstDivergenceTest,
                   public ::testing::WithParamInterface<Case> {};

TEST_P(FaultKinds, FindsInjectedOperator) {
  Case c = GetParam();
  CompareResult r =
      Compare(Faulty(c.fault, 3, c.task), SyntheticRun{.task = c.task});
  ASSERT_TRUE(r.first_divergence.found);
  EXPECT_EQ(r.first_divergence.entry, SyntheticOpName(3));
  EXPECT_EQ(r.first_divergence.reason, c.reason)
      << DivergenceReasonName(r.first_divergence.reason) << ": "
      << r.first_divergence.detail;
  EXPECT_EQ(r.first_divergence.row, SyntheticOpName(3) + ".output.0");
}

INSTANTIATE_TEST_SUITE_P(
    All, FaultKinds,
    ::testing::Values(
        Case{Fault::kPrecision, "tensor", DivergenceReason::kPrecision},
        Case{Fault::kNan, "tensor", DivergenceReason::kNan},
        Case{Fault::kShape, "tensor", DivergenceReason::kShape},
        Case{Fault::kPrecision, "statistics", DivergenceReason::kPrecision},
        Case{Fault::kNan, "statistics", DivergenceReason::kNan},
        Case{Fault::kInf, "statistics", DivergenceReason::kOverflow},
        Case{Fault::kShape, "statistics", DivergenceReason::kShape}));

TEST_F(FirstDivergenceTest, SmallPrecisionLossIsAWarning) {
  SyntheticRun t = Faulty(Fault::kPrecision, 2);
  t.rel = 3e-4;  // 1 - cos stays ~0, but the one-thousandth ratio drops
  CompareResult r = Compare(t, SyntheticRun{});
  ASSERT_TRUE(r.first_divergence.found);
  EXPECT_EQ(r.first_divergence.entry, SyntheticOpName(2));
  EXPECT_GT(r.summary.warning, 0);
}

TEST_F(FirstDivergenceTest, InsertedOpIsAGapWithAlign) {
  CompareOptions align;
  align.align = AlignMode::kOn;
  CompareResult r = Compare(Faulty(Fault::kInserted, 4), SyntheticRun{}, align);
  ASSERT_EQ(r.gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].entry, "Torch.jit_fn.0.forward");
  EXPECT_TRUE(r.gaps[0].in_target);
  EXPECT_EQ(r.summary.unmatched, 2);              // the inserted op's two rows
  EXPECT_EQ(r.summary.pass, r.summary.rows - 2);  // everything else lines up
}

TEST_F(FirstDivergenceTest, MissingOpShiftsCallIndicesWithoutAlign) {
  // Without --align, removing linear.0 renames nothing but leaves the entry
  // missing; with --align the op is reported missing from the target.
  CompareOptions align;
  align.align = AlignMode::kOn;
  CompareResult r = Compare(Faulty(Fault::kMissing, 5), SyntheticRun{}, align);
  ASSERT_EQ(r.gaps.size(), 1u);
  EXPECT_EQ(r.gaps[0].entry, SyntheticOpName(5));
  EXPECT_FALSE(r.gaps[0].in_target);
}

TEST_F(FirstDivergenceTest, Fp16TargetAgainstFp32Baseline) {
  SyntheticRun t;
  t.dtype = DType::kFloat16;
  CompareResult r = Compare(t, SyntheticRun{});
  EXPECT_EQ(r.summary.unmatched,
            0);  // msprobe's dtype gate lets fp16/fp32 pair
  EXPECT_EQ(r.summary.error, 0);
  EXPECT_GT(r.summary.warning, 0);  // dtype differs
}

TEST_F(FirstDivergenceTest, MissingTensorFileMarksOnlyThatRow) {
  std::string t = (dir_ / "target/step0/rank0").string();
  std::string b = (dir_ / "baseline/step0/rank0").string();
  ASSERT_TRUE(WriteSyntheticRun(SyntheticRun{}, t).ok());
  ASSERT_TRUE(WriteSyntheticRun(SyntheticRun{}, b).ok());
  std::string victim =
      t + "/dump_tensor_data/" + SyntheticOpName(2) + ".output.0.npy";
  ASSERT_TRUE(fs::remove(victim));
  std::string cut =
      t + "/dump_tensor_data/" + SyntheticOpName(4) + ".output.0.npy";
  fs::resize_file(cut, 100);
  CompareOptions o;
  auto r = CompareDumpPaths((dir_ / "target").string(),
                            (dir_ / "baseline").string(), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_NE(r->warnings[0].find(victim), std::string::npos) << r->warnings[0];
  EXPECT_NE(r->warnings[1].find(cut), std::string::npos) << r->warnings[1];
  int unsupported = 0;
  for (const auto& row : r->rows) unsupported += row.cells[8] == "unsupported";
  EXPECT_EQ(unsupported, 2);
  EXPECT_EQ(r->summary.pass, r->summary.rows - 2);
  // The bad rows themselves say why.
  for (const auto& row : r->rows) {
    if (row.cells[8] != "unsupported") continue;
    EXPECT_EQ(row.verdict, Verdict::kError);
    std::string all;
    for (const auto& m : row.messages) all += m + "\n";
    EXPECT_NE(all.find("not found or read failed"), std::string::npos) << all;
  }
}

TEST_F(FirstDivergenceTest, CorruptRankIsSkippedOthersCompare) {
  for (int rank : {0, 1}) {
    std::string sub = "/step0/rank" + std::to_string(rank);
    ASSERT_TRUE(
        WriteSyntheticRun(SyntheticRun{}, (dir_ / "target").string() + sub)
            .ok());
    ASSERT_TRUE(
        WriteSyntheticRun(SyntheticRun{}, (dir_ / "baseline").string() + sub)
            .ok());
  }
  std::ofstream((dir_ / "target/step0/rank1/dump.json").string())
      << "{\"task\": \"tensor\", \"data\": {";
  auto r = CompareDumpPaths((dir_ / "target").string(),
                            (dir_ / "baseline").string(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->summary.rows, 16);
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("rank1/dump.json"), std::string::npos)
      << r->warnings[0];
}

TEST_F(FirstDivergenceTest, RankTheBaselineLacksIsAWarning) {
  ASSERT_TRUE(
      WriteSyntheticRun(SyntheticRun{}, (dir_ / "target/step0/rank0").string())
          .ok());
  ASSERT_TRUE(
      WriteSyntheticRun(SyntheticRun{}, (dir_ / "target/step0/rank1").string())
          .ok());
  ASSERT_TRUE(WriteSyntheticRun(SyntheticRun{},
                                (dir_ / "baseline/step0/rank0").string())
                  .ok());
  auto r = CompareDumpPaths((dir_ / "target").string(),
                            (dir_ / "baseline").string(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->missing_ranks.empty());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "step 0 rank 1 is in the target only");
  // The other way round the target lacks rank 1: no comparison for it.
  auto back = CompareDumpPaths((dir_ / "baseline").string(),
                               (dir_ / "target").string(), {});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->missing_ranks.size(), 1u);
  EXPECT_EQ(back->missing_ranks[0].rank, 1);
  EXPECT_EQ(back->missing_ranks[0].why, "not in the target");
}

// Runs on different devices (CPU vs GPU, GPU vs NPU) differ in their device
// arguments by design: `x.to(device)` recorded as a torch.device by
// lockstep's probe, or as a string by msprobe. Neither is a divergence; a
// later precision difference is the first divergence.
TEST_F(FirstDivergenceTest, DeviceArgumentsAreNotADivergence) {
  auto dump = [&](const std::string& device, const std::string& device_str,
                  double linear_mean) {
    const std::string t =
        R"({"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4], )"
        R"("Max": 2.0, "Min": -1.0, "Mean": 0.25, "Norm": 2.5, )"
        R"("requires_grad": false})";
    return std::string(R"({"task": "statistics", "level": "L1", "data": {)") +
           R"("Tensor.to.0.forward": {"input_args": [)" + t +
           R"(, {"type": "torch.device", "value": ")" + device +
           R"("}], "input_kwargs": {}, "output": [)" + t + "]}, " +
           R"("Tensor.to.1.forward": {"input_args": [)" + t +
           R"(, {"type": "str", "value": ")" + device_str +
           R"("}], "input_kwargs": {}, "output": [)" + t + "]}, " +
           R"("Functional.linear.0.forward": {"input_args": [)" + t +
           R"(], "input_kwargs": {}, "output": [{"type": "torch.Tensor", )"
           R"("dtype": "torch.float32", "shape": [4], "Max": 2.0, )"
           R"("Min": -1.0, "Mean": )" +
           std::to_string(linear_mean) +
           R"(, "Norm": 2.5, "requires_grad": false}]}}})";
  };
  auto write = [&](const std::string& side, const std::string& text) {
    fs::path d = dir_ / side / "step0/rank0";
    fs::create_directories(d);
    std::ofstream(d / "dump.json") << text;
  };
  write("baseline", dump("cpu", "cuda", 0.25));
  // The compare of a target written as `text` against it.
  auto compare = [&](const std::string& text) {
    write("target", text);
    StatusOr<CompareResult> r = CompareDumpPaths(
        (dir_ / "target").string(), (dir_ / "baseline").string(), {});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : CompareResult();
  };
  CompareResult r = compare(dump("cuda:0", "npu:0", 0.25));
  EXPECT_FALSE(r.first_divergence.found) << r.first_divergence.detail;
  EXPECT_EQ(r.summary.error, 0);
  // The same dumps with linear's output off: linear, not the devices.
  r = compare(dump("cuda:0", "npu:0", 0.5));
  ASSERT_TRUE(r.first_divergence.found);
  EXPECT_EQ(r.first_divergence.entry, "Functional.linear.0.forward");
  // A string that is not a device still counts.
  r = compare(dump("cuda:0", "nearest", 0.25));
  ASSERT_TRUE(r.first_divergence.found);
  EXPECT_EQ(r.first_divergence.entry, "Tensor.to.1.forward");
  EXPECT_EQ(r.first_divergence.reason, DivergenceReason::kArgument);
}

// DDP's reducer copies into an uninitialised buffer: what copy_'s self held
// before the call is garbage on both sides, and not a divergence.
TEST_F(FirstDivergenceTest, WhatACopyOverwritesIsNotCompared) {
  auto dump = [&](double garbage_max, double src_mean) {
    auto t = [](double max, double mean) {
      return R"({"type": "torch.Tensor", "dtype": "torch.int32", "shape": [4], )"
             R"("Max": )" + std::to_string(max) + R"(, "Min": 0, "Mean": )" +
             std::to_string(mean) + R"(, "Norm": 5.0, "requires_grad": false})";
    };
    return std::string(R"({"task": "statistics", "level": "L1", "data": {)") +
           R"("Tensor.copy_.0.forward": {"input_args": [)" +
           t(garbage_max, 1.0) + ", " + t(3, src_mean) +
           R"(], "input_kwargs": {}, "output": []}}})";
  };
  auto write = [&](const std::string& side, const std::string& text) {
    fs::path d = dir_ / side / "step0/rank0";
    fs::create_directories(d);
    std::ofstream(d / "dump.json") << text;
  };
  write("baseline", dump(12345, 1.0));
  write("target", dump(-99999, 1.0));
  StatusOr<CompareResult> r = CompareDumpPaths(
      (dir_ / "target").string(), (dir_ / "baseline").string(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->first_divergence.found) << r->first_divergence.detail;
  EXPECT_EQ(r->summary.error, 0);
  // The source it copies from still counts.
  write("target", dump(-99999, 2.0));
  r = CompareDumpPaths((dir_ / "target").string(),
                       (dir_ / "baseline").string(), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->first_divergence.found);
  EXPECT_EQ(r->first_divergence.row, "Tensor.copy_.0.forward.input.1");
}

// Statistics dumps from a real GPU (tests/data/h200_tinygpt).
TEST_F(FirstDivergenceTest, H200DumpsTf32AndCpuVsGpu) {
  const std::string base =
      std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/h200_tinygpt/";
  CompareOptions o;
  o.steps = {0};
  StatusOr<CompareResult> r =
      CompareDumpPaths(base + "stats_gpu_tf32", base + "stats_gpu_fp32", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->first_divergence.found);
  EXPECT_EQ(r->first_divergence.entry, "Functional.linear.0.forward");
  EXPECT_EQ(r->first_divergence.reason, DivergenceReason::kPrecision);
  // CPU vs GPU: not the `cpu` vs `cuda` arguments; the optimizer's calls
  // differ (per tensor vs foreach); nothing matched after it diverges by
  // the rule, though rows after it do not pass (said so, not "all agree").
  r = CompareDumpPaths(base + "stats_cpu_fp32", base + "stats_gpu_fp32",
                       CompareOptions());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->first_divergence.found);
  EXPECT_EQ(r->first_divergence.reason, DivergenceReason::kMissing)
      << r->first_divergence.entry << ": " << r->first_divergence.detail;
  EXPECT_EQ(r->first_divergence.entry, "Tensor.add_.0.forward");
  EXPECT_EQ(r->first_divergence.detail.find("all agree"), std::string::npos)
      << r->first_divergence.detail;
  EXPECT_NE(r->first_divergence.detail.find("of their rows do not pass"),
            std::string::npos)
      << r->first_divergence.detail;
}

}  // namespace
}  // namespace lockstep
