// The first-divergence rule on hand-built rows: each rule of
// first_divergence.h, and the cases where it must stay silent.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/compare/first_divergence.h"
#include "lockstep/compare/verdict.h"

namespace lockstep {
namespace {

constexpr double kFp32Floor = 0x1p-17;

// Builds the rows of one (step, rank) stream.
class Stream {
 public:
  explicit Stream(int step = 0) : step_(step) {}

  // A tensor row. `stats` are the baseline's (max, min, mean, norm); the
  // target's are the same scaled by 1 + error unless `target` is given.
  Stream& Tensor(const std::string& entry, const std::string& io, double error,
                 std::array<double, 4> stats,
                 std::optional<std::array<double, 4>> target = {}) {
    CompareRow r = Base(entry, io);
    r.is_tensor = true;
    r.error = error;
    r.floor = kFp32Floor;
    r.baseline_stats = stats;
    if (target) {
      r.target_stats = *target;
    } else {
      for (int k = 0; k < 4; ++k) r.target_stats[k] = stats[k] * (1 + error);
    }
    r.verdict = error > kFp32Floor ? Verdict::kError : Verdict::kPass;
    if (r.verdict != Verdict::kPass) r.reason = DivergenceReason::kPrecision;
    rows_.push_back(r);
    return *this;
  }

  // A number argument.
  Stream& Number(const std::string& entry, const std::string& io, double t,
                 double b) {
    CompareRow r = Base(entry, io);
    r.error = t == b ? 0 : std::fabs(t - b) / std::fabs(b);
    r.target_stats[0] = t;
    r.baseline_stats[0] = b;
    r.verdict = t == b ? Verdict::kPass : Verdict::kError;
    r.messages.push_back("value " + std::to_string(t) + " vs " +
                         std::to_string(b));
    rows_.push_back(r);
    return *this;
  }

  Stream& Unmatched(const std::string& entry, const std::string& io) {
    CompareRow r = Base(entry, io);
    r.verdict = Verdict::kUnmatched;
    rows_.push_back(r);
    return *this;
  }

  // Changes row i's error (its verdict follows; its statistics do not).
  Stream& SetError(size_t i, double error) {
    rows_[i].error = error;
    rows_[i].verdict = error > kFp32Floor ? Verdict::kError : Verdict::kPass;
    return *this;
  }

  std::vector<CompareRow>& rows() { return rows_; }

 private:
  CompareRow Base(const std::string& entry, const std::string& io) {
    CompareRow r;
    r.entry = entry;
    r.cells = PackedCells({entry + "." + io, entry + "." + io});
    r.step = step_;
    r.is_output = io.rfind("output", 0) == 0;
    r.is_input = !r.is_output;
    return r;
  }

  int step_;
  std::vector<CompareRow> rows_;
};

const std::array<double, 4> kX = {3, -2, 0.1, 40};
const std::array<double, 4> kY = {5, -1, 0.7, 60};
const std::array<double, 4> kW = {0.5, -0.5, 0.01, 4};
const std::array<double, 4> kZ = {9, -9, 1.5, 99};

TEST(DivergenceRuleTest, IdenticalRunsHaveNone) {
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 0, kY);
  EXPECT_FALSE(FindFirstDivergence(s.rows(), {}).found);
}

TEST(DivergenceRuleTest, OutputBeyondTheFloorWithExactInputs) {
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 0, kY)
      .Tensor("Functional.gelu.0.forward", "input.0", 0, kY)
      .Tensor("Functional.gelu.0.forward", "output.0", 1e-3, kZ);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Functional.gelu.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kPrecision);
  EXPECT_EQ(f.row, "Functional.gelu.0.forward.output.0");
  EXPECT_FALSE(f.drift);
}

TEST(DivergenceRuleTest, ErrorWithinRoundingFloorIsNoise) {
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", kFp32Floor / 2, kY);
  EXPECT_FALSE(FindFirstDivergence(s.rows(), {}).found);
}

TEST(DivergenceRuleTest, PropagatedErrorIsNotACause) {
  // linear amplifies its input's error 3x (within kAmplification); add
  // passes it on; softmax amplifies 40x: softmax is named.
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 1e-3, kY)
      .Tensor("Functional.linear.0.forward", "input.0", 1e-3, kY)
      .Tensor("Functional.linear.0.forward", "output.0", 3e-3, kW)
      .Tensor("Torch.add.0.forward", "input.0", 3e-3, kW)
      .Tensor("Torch.add.0.forward", "output.0", 3e-3, kZ);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Functional.relu.0.forward");  // exact inputs

  Stream t;
  t.Tensor("Functional.linear.0.forward", "input.0", 1e-3, kY)
      .Tensor("Functional.linear.0.forward", "output.0", 3e-3, kW)
      .Tensor("Functional.softmax.0.forward", "input.0", 3e-3, kW)
      .Tensor("Functional.softmax.0.forward", "output.0", 0.12, kZ);
  // linear's input: no producer, but nothing was seen before it: an input
  // that differs before any op diverged.
  f = FindFirstDivergence(t.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Functional.linear.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kInput);
  EXPECT_NE(f.detail.find("before the first step"), std::string::npos)
      << f.detail;
}

TEST(DivergenceRuleTest, AmplificationBeyondTheBoundIsNamed) {
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 1e-5, kY)  // noise
      .Tensor("Functional.linear.0.forward", "input.0", 1e-5, kY)
      .Tensor("Functional.linear.0.forward", "output.0", 3e-5, kW)
      .Tensor("Functional.softmax.0.forward", "input.0", 3e-5, kW)
      .Tensor("Functional.softmax.0.forward", "output.0", 3e-3, kZ);
  // relu's 1e-5 with exact inputs is past the fp32 floor (7.6e-6): named.
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  EXPECT_EQ(f.entry, "Functional.relu.0.forward");
  s.SetError(1, 5e-6).SetError(2, 5e-6);  // below the floor
  s.SetError(3, 2e-5).SetError(4, 2e-5);  // 4x 5e-6 + floor = 2.8e-5
  f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Functional.softmax.0.forward") << f.detail;
  EXPECT_NE(f.detail.find("output error 0.003"), std::string::npos) << f.detail;
}

TEST(DivergenceRuleTest, ChangedArgumentIsNamedWithItsName) {
  Stream s;
  s.Tensor("Functional.layer_norm.0.forward", "input.0", 0, kX)
      .Number("Functional.layer_norm.0.forward", "input.4", 1e-2, 1e-5)
      .Tensor("Functional.layer_norm.0.forward", "output.0", 0.2, kY);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.reason, DivergenceReason::kArgument);
  EXPECT_EQ(f.row, "Functional.layer_norm.0.forward.input.4");
  EXPECT_EQ(f.detail.rfind("argument `eps`: ", 0), 0u) << f.detail;
}

TEST(DivergenceRuleTest, ArgumentAnEarlierOpReturnedIsPropagated) {
  // Tensor.item returns 2.5 vs 2.0 after an exact input... item's own output
  // is the cause; mul's argument carrying that value is not.
  Stream s;
  s.Tensor("Tensor.item.0.forward", "input.0", 0, kX)
      .Number("Tensor.item.0.forward", "output.0", 2.5, 2.0)
      .Tensor("Torch.mul.0.forward", "input.0", 0, kY)
      .Number("Torch.mul.0.forward", "input.1", 2.5, 2.0);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Tensor.item.0.forward");
  // With item agreeing, the argument is a cause.
  Stream t;
  t.Tensor("Tensor.item.0.forward", "input.0", 0, kX)
      .Number("Tensor.item.0.forward", "output.0", 2.0, 2.0)
      .Tensor("Torch.mul.0.forward", "input.0", 0, kY)
      .Number("Torch.mul.0.forward", "input.1", 2.5, 2.0);
  f = FindFirstDivergence(t.rows(), {});
  EXPECT_EQ(f.entry, "Torch.mul.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kArgument);
}

TEST(DivergenceRuleTest, GradientChangedBetweenTwoOps) {
  // add.0.backward returns kY on both sides; dropout.0.backward receives it
  // doubled in the target (a hook on the tensor between them).
  std::array<double, 4> doubled = {10, -2, 1.4, 120};
  Stream s;
  s.Tensor("Torch.add.0.backward", "input.0", 0, kX)
      .Tensor("Torch.add.0.backward", "output.0", 0, kY)
      .Tensor("Functional.dropout.0.backward", "input.0", 1.0, kY, doubled)
      .Tensor("Functional.dropout.0.backward", "output.0", 1.0, kZ);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Functional.dropout.0.backward");
  EXPECT_EQ(f.reason, DivergenceReason::kInput);
  EXPECT_NE(f.detail.find("not what Torch.add.0.backward returned"),
            std::string::npos)
      << f.detail;
}

TEST(DivergenceRuleTest, InputThatAnEarlierOutputWasIsExplained) {
  // relu's output differs (named); linear's input is that output: linear is
  // not named even though its input jumps past everything seen.
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 0.5, kY)
      .Tensor("Functional.linear.0.forward", "input.0", 0.5, kY);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  EXPECT_EQ(f.entry, "Functional.relu.0.forward");
}

TEST(DivergenceRuleTest, InputJumpAfterNoiseIsNamed) {
  // Step 0 drifts at 1e-4 (named: its source); in step 1 a parameter that no
  // dumped op produced differs by 0.3, far more than the 1e-4 seen.
  Stream s0(0), s1(1);
  s0.Tensor("Torch.add.0.forward", "input.0", 0, kZ)
      .Tensor("Torch.add.0.forward", "output.0", 1e-4, kX);
  s1.Tensor("Functional.relu.0.forward", "input.0", 1e-4, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 1e-4, kY)
      .Tensor("Functional.linear.0.forward", "input.0", 1e-4, kY)
      .Tensor("Functional.linear.0.forward", "input.1", 0.3, kW)
      .Tensor("Functional.linear.0.forward", "output.0", 0.3, kZ);
  std::vector<CompareRow> rows = s0.rows();
  rows.insert(rows.end(), s1.rows().begin(), s1.rows().end());
  FirstDivergence f = FindFirstDivergence(rows, {});
  EXPECT_EQ(f.entry, "Torch.add.0.forward");
  // With add's 1e-4 a tolerated drift (its input 3e-5 off), linear's weight
  // is the jump.
  rows[0].error = 3e-5;
  f = FindFirstDivergence(rows, {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.step, 1);
  EXPECT_EQ(f.row, "Functional.linear.0.forward.input.1");
  EXPECT_EQ(f.reason, DivergenceReason::kInput);
  EXPECT_NE(f.detail.find("changed outside the dumped operators"),
            std::string::npos)
      << f.detail;
  // A 3x jump is within kInputJump: nothing is named by the rule.
  rows[5].error = 3e-4;
  rows[6].error = 3e-4;
  f = FindFirstDivergence(rows, {});
  EXPECT_NE(f.detail.find("accumulated rounding"), std::string::npos)
      << f.detail;
}

// Runs identical up to a parameter of which one element was scaled by
// 1.001: the weight's error is far below the fp32 floor, and is the change.
TEST(DivergenceRuleTest, AnyDifferenceOfAnUnproducedInputInIdenticalRuns) {
  auto rows = [](double weight_error, double cosine,
                 std::array<double, 4> weight_target) {
    Stream s;
    s.Tensor("Functional.embedding.0.forward", "input.0", 0, kZ)
        .Tensor("Functional.embedding.0.forward", "output.0", 0, kX)
        .Tensor("Functional.linear.0.forward", "input.0", 0, kX)
        .Tensor("Functional.linear.0.forward", "input.1", weight_error, kW,
                weight_target)
        .Tensor("Functional.linear.0.forward", "output.0", weight_error, kY);
    for (CompareRow& r : s.rows()) r.cosine = cosine;
    return s.rows();
  };
  const double nan = std::nan("");
  // Tensor mode (a cosine): any element that differs.
  FirstDivergence f = FindFirstDivergence(rows(1e-7, 1.0, kW), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.row, "Functional.linear.0.forward.input.1");
  EXPECT_EQ(f.reason, DivergenceReason::kInput);
  EXPECT_NE(f.detail.find("before any dumped operator diverged"),
            std::string::npos)
      << f.detail;
  // Statistics mode: the mean moved by 1e-5 relative.
  std::array<double, 4> mean_moved = kW;
  mean_moved[2] *= 1 + 1e-5;
  f = FindFirstDivergence(rows(1e-7, nan, mean_moved), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.row, "Functional.linear.0.forward.input.1");
  // ... but a mean and norm 1e-7 apart (summed in another order) are not a
  // change, and nothing else differs beyond the floor.
  std::array<double, 4> resummed = kW;
  resummed[2] *= 1 + 1e-7;
  resummed[3] *= 1 - 1e-7;
  EXPECT_FALSE(FindFirstDivergence(rows(1e-7, nan, resummed), {}).found);
  // Once an earlier error is not 0 the runs are not identical: the floor
  // applies again.
  std::vector<CompareRow> noisy = rows(1e-7, 1.0, kW);
  noisy[1].error = 1e-9;
  noisy[2].error = 1e-9;
  EXPECT_FALSE(FindFirstDivergence(noisy, {}).found);
}

// An inserted `h * 1.0` returns its input: walked past and listed; the
// GELU variant after it is named. An inserted cast that rounds is named.
TEST(DivergenceRuleTest, InsertedCallThatReturnsItsInputIsListedNotNamed) {
  auto inserted = [](std::array<double, 4> out) {
    Stream s;
    s.Tensor("Functional.layer_norm.0.forward", "input.0", 0, kX)
        .Tensor("Functional.layer_norm.0.forward", "output.0", 0, kY)
        .Unmatched("Torch.mul.0.forward", "input.0")
        .Unmatched("Torch.mul.0.forward", "input.1")
        .Unmatched("Torch.mul.0.forward", "output.0")
        .Tensor("Functional.gelu.0.forward", "input.0", 0, kY)
        .Number("Functional.gelu.0.forward", "input.1", 1, 0)
        .Tensor("Functional.gelu.0.forward", "output.0", 1e-3, kZ);
    std::vector<CompareRow>& r = s.rows();
    for (size_t i : {2, 4}) r[i].is_tensor = true;
    r[2].target_stats = kY;
    r[3].target_stats[0] = 1.0;  // the number 1.0
    r[4].target_stats = out;
    return r;
  };
  FirstDivergence f = FindFirstDivergence(inserted(kY), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Functional.gelu.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kArgument);
  EXPECT_NE(f.detail.find("return their input (not the cause): "
                          "Torch.mul.0.forward (step 0)"),
            std::string::npos)
      << f.detail;
  // Rounded through fp16: its max moved, and it is the change.
  std::array<double, 4> rounded = kY;
  rounded[0] = 5.0039;
  f = FindFirstDivergence(inserted(rounded), {});
  EXPECT_EQ(f.entry, "Torch.mul.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kMissing);
}

// msprobe's backward entry of an inserted `x * 1.0`: the gradient passed to
// x equals the one arriving, and the 1.0's place holds None. It returns its
// input too; the None carries nothing.
TEST(DivergenceRuleTest, InsertedBackwardWithANoneOutputReturnsItsInput) {
  auto inserted = [](std::array<double, 4> passed) {
    Stream s;
    s.Unmatched("Tensor.__mul__.0.backward", "input.0")
        .Unmatched("Tensor.__mul__.0.backward", "output.0")
        .Unmatched("Tensor.__mul__.0.backward", "output.1")
        .Tensor("Functional.layer_norm.0.backward", "input.0", 0, kW)
        .Tensor("Functional.layer_norm.0.backward", "output.0", 0, kX);
    std::vector<CompareRow>& r = s.rows();
    for (size_t i : {0, 1}) r[i].is_tensor = true;
    r[0].target_stats = kW;
    r[1].target_stats = passed;  // r[2]: None (not a tensor, no value)
    return r;
  };
  FirstDivergence f = FindFirstDivergence(inserted(kW), {});
  EXPECT_FALSE(f.found) << f.entry << ": " << f.detail;
  // A gradient that the inserted call changed is named.
  std::array<double, 4> doubled = {2 * kW[0], 2 * kW[1], 2 * kW[2], 2 * kW[3]};
  f = FindFirstDivergence(inserted(doubled), {});
  EXPECT_EQ(f.entry, "Tensor.__mul__.0.backward");
  EXPECT_EQ(f.reason, DivergenceReason::kMissing);
}

// A linear under autocast: fp32 inputs on both sides, a bfloat16 output in
// the target whose statistics (recorded in bfloat16) barely move. The
// softmax after it, whose input dtype differs, is not the change.
TEST(DivergenceRuleTest, OutputDtypeChangeWithSameInputDtypesIsNamed) {
  Stream s;
  s.Tensor("Functional.linear.0.forward", "input.0", 0, kX)
      .Tensor("Functional.linear.0.forward", "input.1", 0, kW)
      .Tensor("Functional.linear.0.forward", "output.0", 0, kY)
      .Tensor("Functional.softmax.0.forward", "input.0", 0, kY)
      .Tensor("Functional.softmax.0.forward", "output.0", 1e-2, kZ);
  std::vector<CompareRow>& r = s.rows();
  EXPECT_EQ(FindFirstDivergence(r, {}).entry, "Functional.softmax.0.forward");
  for (size_t i : {2, 3}) {
    r[i].messages.push_back("dtype torch.bfloat16 vs torch.float32");
    r[i].reason = DivergenceReason::kDtype;
  }
  FirstDivergence f = FindFirstDivergence(r, {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Functional.linear.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kDtype);
  EXPECT_EQ(f.row, "Functional.linear.0.forward.output.0");
  EXPECT_NE(f.detail.find("bfloat16 vs torch.float32"), std::string::npos)
      << f.detail;
  // With an input's dtype changed too, the change came in with it: in runs
  // identical so far, that input (no dumped op made it) is the answer.
  r[0].messages.push_back("dtype torch.bfloat16 vs torch.float32");
  f = FindFirstDivergence(r, {});
  EXPECT_EQ(f.entry, "Functional.linear.0.forward");
  EXPECT_EQ(f.row, "Functional.linear.0.forward.input.0");
  // After noise elsewhere, it is not (an earlier op may have cast it).
  Stream n;
  n.Tensor("Functional.relu.0.forward", "input.0", 0, kW)
      .Tensor("Functional.relu.0.forward", "output.0", 1e-7, kW);
  for (const CompareRow& row : r) n.rows().push_back(row);
  EXPECT_EQ(FindFirstDivergence(n.rows(), {}).entry,
            "Functional.softmax.0.forward");
}

// msprobe's cross_dtype_mapping: MindSpore's names against PyTorch's.
TEST(DivergenceRuleTest, DtypeNamesAcrossFrameworks) {
  EXPECT_TRUE(SameDtype("BFloat16", "torch.bfloat16"));
  EXPECT_TRUE(SameDtype("Float32", "torch.float32"));
  EXPECT_TRUE(SameDtype("Int64", "torch.int64"));
  EXPECT_FALSE(SameDtype("Float16", "torch.bfloat16"));
  EXPECT_FALSE(SameDtype("torch.float32", "torch.float64"));
  EXPECT_EQ(NormalizedDtype("torch.bfloat16"), "bfloat16");
}

TEST(DivergenceRuleTest, BackwardIncludesItsForwardError) {
  // The loss's gradient is exact (1.0), but cross_entropy's forward inputs
  // already differed: its backward's output error is explained.
  Stream s;
  s.Tensor("Functional.cross_entropy.0.forward", "input.0", 0, kX)
      .Tensor("Functional.cross_entropy.0.forward", "output.0", 0.01, kY);
  // (forward named first; check the backward alone by making it noise)
  s.SetError(1, 5e-6);
  s.Tensor("Functional.cross_entropy.0.backward", "input.0", 0, kW)
      .Tensor("Functional.cross_entropy.0.backward", "output.0", 1.5e-5, kZ);
  // Past the floor (a failing row) but within 4x 5e-6 + floor: only the
  // fallback names it.
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  EXPECT_NE(f.detail.find("accumulated rounding"), std::string::npos)
      << f.detail;
  s.SetError(3, 1e-3);
  f = FindFirstDivergence(s.rows(), {});
  EXPECT_EQ(f.entry, "Functional.cross_entropy.0.backward");
}

TEST(DivergenceRuleTest, InsertedAndMissingEntriesInStreamOrder) {
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 0, kY)
      .Unmatched("Torch.mul.0.forward", "input.0")
      .Unmatched("Torch.mul.0.forward", "output.0")
      .Tensor("Functional.gelu.0.forward", "input.0", 0, kY)
      .Tensor("Functional.gelu.0.forward", "output.0", 0.3, kZ);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  EXPECT_EQ(f.entry, "Torch.mul.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kMissing);
  // A baseline-only entry before relu (target position 0) comes first.
  AlignmentGap g{"Torch.cast.0.forward", false, 0, 0, 0, 0};
  f = FindFirstDivergence(s.rows(), {g});
  EXPECT_EQ(f.entry, "Torch.cast.0.forward");
  EXPECT_NE(f.detail.find("before Functional.relu.0.forward"),
            std::string::npos)
      << f.detail;
  // ...and one before gelu (position 2) comes after mul.
  g.target_position = 2;
  EXPECT_EQ(FindFirstDivergence(s.rows(), {g}).entry, "Torch.mul.0.forward");
}

// After an inserted or missing call the walk goes on: the detail names the
// first matched call that diverges after it, or says that all agree (a
// foreach optimizer on one side, per-tensor ops on the other).
TEST(DivergenceRuleTest, WhatTheCallsAfterAGapShowIsInItsDetail) {
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 0, kY)
      .Unmatched("Tensor.add_.0.forward", "input.0")
      .Unmatched("Tensor.add_.0.forward", "output.0")
      .Tensor("Functional.gelu.0.forward", "input.0", 0, kY)
      .Tensor("Functional.gelu.0.forward", "output.0", 0, kZ)
      .Tensor("Functional.linear.0.forward", "input.0", 0, kZ)
      .Tensor("Functional.linear.0.forward", "output.0", 0, kW);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  EXPECT_EQ(f.entry, "Tensor.add_.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kMissing);
  EXPECT_NE(f.detail.find("the 2 matched calls after it all agree"),
            std::string::npos)
      << f.detail;
  s.SetError(7, 0.3);  // linear's output: a precision divergence after it
  f = FindFirstDivergence(s.rows(), {});
  EXPECT_EQ(f.entry, "Tensor.add_.0.forward");
  EXPECT_NE(f.detail.find("the first matched call after it that diverges: "
                          "Functional.linear.0.forward (step 0, precision)"),
            std::string::npos)
      << f.detail;
  // A baseline-only gap reads the same way.
  Stream t;
  t.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 0, kY)
      .Tensor("Functional.gelu.0.forward", "input.0", 0, kY)
      .Tensor("Functional.gelu.0.forward", "output.0", 0, kZ);
  AlignmentGap g{"Torch.cast.0.forward", false, 0, 0, 0, 1};  // before gelu
  f = FindFirstDivergence(t.rows(), {g});
  EXPECT_EQ(f.entry, "Torch.cast.0.forward");
  EXPECT_NE(f.detail.find("the 1 matched calls after it all agree"),
            std::string::npos)
      << f.detail;
  // Rows after it that warn, below what the rule names: not "all agree".
  t.rows()[3].verdict = Verdict::kWarning;
  f = FindFirstDivergence(t.rows(), {g});
  EXPECT_EQ(f.detail.find("all agree"), std::string::npos) << f.detail;
  EXPECT_NE(f.detail.find("yet 1 of their rows do not pass"), std::string::npos)
      << f.detail;
}

TEST(DivergenceRuleTest, EarliestStepThenLowestRank) {
  Stream r0(1), r1(0);
  r0.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 0.2, kY);
  r1.Tensor("Functional.gelu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.gelu.0.forward", "output.0", 0.2, kY);
  for (auto& r : r1.rows()) r.rank = 1;
  std::vector<CompareRow> rows = r0.rows();
  rows.insert(rows.end(), r1.rows().begin(), r1.rows().end());
  FirstDivergence f = FindFirstDivergence(rows, {});
  EXPECT_EQ(f.rank, 1);
  EXPECT_EQ(f.step, 0);
}

// A parameter that differs at step 1 though nothing diverged at step 0:
// the optimizer's in-place calls at the end of step 0 wrote it without
// recording it; the detail points there.
TEST(DivergenceRuleTest, InputChangedAfterAnEarlierStepsInPlaceCall) {
  Stream s0(0), s1(1);
  s0.Tensor("Functional.linear.0.forward", "input.0", 0, kX)
      .Tensor("Functional.linear.0.forward", "output.0", 1e-6, kY)
      .Tensor("Torch._foreach_addcdiv_.0.forward", "input.0", 1e-6, kZ);
  s1.Tensor("Functional.linear.0.forward", "input.0", 0, kX)
      .Tensor("Functional.linear.0.forward", "input.2", 0.2, kW);
  std::vector<CompareRow> rows = s0.rows();
  rows.insert(rows.end(), s1.rows().begin(), s1.rows().end());
  FirstDivergence f = FindFirstDivergence(rows, {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.step, 1);
  EXPECT_EQ(f.reason, DivergenceReason::kInput);
  EXPECT_NE(f.detail.find("(the last: Torch._foreach_addcdiv_.0.forward)"),
            std::string::npos)
      << f.detail;
  // Without an in-place call before it, no such hint.
  rows[2].entry = "Torch.addcdiv.0.forward";
  f = FindFirstDivergence(rows, {});
  EXPECT_EQ(f.detail.find("in-place"), std::string::npos) << f.detail;
}

TEST(DivergenceRuleTest, FallbackNamesTheEarliestNonPassingRow) {
  // Nothing exceeds what came before (a slow drift), but rows fail.
  Stream s;
  s.Tensor("Functional.relu.0.forward", "input.0", 0, kX)
      .Tensor("Functional.relu.0.forward", "output.0", 5e-6, kY)
      .Tensor("Functional.linear.0.forward", "input.0", 5e-6, kY)
      .Tensor("Functional.linear.0.forward", "output.0", 2e-5, kW);
  s.rows()[1].verdict = Verdict::kWarning;  // a dtype change, say
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.row, "Functional.relu.0.forward.output.0");
  EXPECT_NE(f.detail.find("accumulated rounding"), std::string::npos);
  EXPECT_TRUE(f.drift);
}

TEST(DivergenceRuleTest, QuotientsAreNamedOnlyWithEqualInputs) {
  // Adam's addcdiv_: noise in near-zero gradients becomes whole steps.
  // (After an op with a little noise: runs identical up to an input would
  // make any difference in it the change.)
  Stream s;
  s.Tensor("Torch.add.0.forward", "input.0", 0, kW)
      .Tensor("Torch.add.0.forward", "output.0", 1e-9, kW)
      .Tensor("Tensor.addcdiv_.0.forward", "input.0", 0, kX)
      .Tensor("Tensor.addcdiv_.0.forward", "input.1", 1e-6, kY)
      .Tensor("Tensor.addcdiv_.0.forward", "output.0", 0.3, kZ);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  EXPECT_TRUE(f.drift);  // input.1 (1e-6) is below the floor, yet not 0
  s.SetError(3, 0);
  f = FindFirstDivergence(s.rows(), {});
  EXPECT_FALSE(f.drift);
  EXPECT_EQ(f.entry, "Tensor.addcdiv_.0.forward");
  // A multiplication is bounded: named with the same inputs.
  Stream m;
  m.Tensor("Tensor.mul_.0.forward", "input.0", 0, kX)
      .Tensor("Tensor.mul_.0.forward", "input.1", 1e-6, kY)
      .Tensor("Tensor.mul_.0.forward", "output.0", 0.3, kZ);
  f = FindFirstDivergence(m.rows(), {});
  EXPECT_FALSE(f.drift);
  EXPECT_EQ(f.entry, "Tensor.mul_.0.forward");
}

TEST(DivergenceRuleTest, SumsOverDimensionsAreNamedOnlyWithEqualInputs) {
  // An RMSNorm's `x.pow(2).mean(-1)` in bfloat16 runs after one noisy
  // step: relative to the row means' scale, the squares' noise (its norm
  // 5e-6 of the squares', whose largest is many times their mean) is 10x
  // larger, and the statistics cannot show that it is the same noise.
  Stream s;
  s.Tensor("Torch.add.0.forward", "input.0", 0, kW)
      .Tensor("Torch.add.0.forward", "output.0", 1e-9, kW)
      .Tensor("Torch.mean.0.forward", "input.0", 5e-6, kX)
      .Tensor("Torch.mean.0.forward", "output.0", 5e-5, kY);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  EXPECT_TRUE(f.drift) << f.entry;
  // With equal inputs, a changed sum is the sum's own.
  s.SetError(2, 0);
  f = FindFirstDivergence(s.rows(), {});
  EXPECT_FALSE(f.drift);
  EXPECT_EQ(f.entry, "Torch.mean.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kPrecision);
}

TEST(DivergenceRuleTest, CallsGivingOnlyAgreeingValuesAreWalkedPast) {
  // `500000.0 ** x` (a rotary base changed): ATen asks result_type first,
  // whose argument differs and whose output (a dtype) does not; the pow
  // that computes with the base is the answer.
  Stream s;
  s.Number("Torch.result_type.0.forward", "input.0", 500000, 10000)
      .Tensor("Torch.result_type.0.forward", "input.1", 0, kX)
      .Number("Torch.result_type.0.forward", "output.0", 6, 6)
      .Number("Torch.pow.0.forward", "input.0", 500000, 10000)
      .Tensor("Torch.pow.0.forward", "input.1", 0, kX)
      .Tensor("Torch.pow.0.forward", "output.0", 0.5, kY);
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.entry, "Torch.pow.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kArgument);
  // The base made a tensor first (torch 1.13's `__rpow__`): the first
  // call that takes it is named, with its value on each side.
  Stream u;
  u.Number("Torch.result_type.0.forward", "input.0", 500000, 10000)
      .Number("Torch.result_type.0.forward", "output.0", 6, 6)
      .Tensor("Tensor.to.0.forward", "input.0", 49, {1e4, 1e4, 1e4, 1e4},
              std::array<double, 4>{5e5, 5e5, 5e5, 5e5});
  f = FindFirstDivergence(u.rows(), {});
  EXPECT_EQ(f.entry, "Tensor.to.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kInput);
  EXPECT_NE(f.detail.find("input 0 (5e+05 vs 1e+04) differs"),
            std::string::npos)
      << f.detail;
  // A plain value that differs is the call's own answer (Tensor.item).
  Stream t;
  t.Number("Torch.result_type.0.forward", "input.0", 500000, 10000)
      .Number("Torch.result_type.0.forward", "output.0", 7, 6)
      .Number("Torch.pow.0.forward", "input.0", 500000, 10000);
  f = FindFirstDivergence(t.rows(), {});
  EXPECT_EQ(f.entry, "Torch.result_type.0.forward");
}

TEST(DivergenceRuleTest, InputDifferingInDtypeAloneBeforeAnyDivergence) {
  // msprobe's dump of a rotary embedding whose `arange` (not dumped) is
  // float64 in the target: the first dumped call, `arange / d`, takes the
  // same numbers in another dtype.
  Stream s;
  s.Tensor("Tensor.__truediv__.0.forward", "input.0", 0, kX)
      .Number("Tensor.__truediv__.0.forward", "input.1", 8, 8)
      .Tensor("Tensor.__truediv__.0.forward", "output.0", 0, kW);
  s.rows()[0].messages.push_back("dtype torch.float64 vs torch.float32");
  s.rows()[0].verdict = Verdict::kWarning;
  FirstDivergence f = FindFirstDivergence(s.rows(), {});
  ASSERT_TRUE(f.found);
  EXPECT_FALSE(f.drift);
  EXPECT_EQ(f.entry, "Tensor.__truediv__.0.forward");
  EXPECT_EQ(f.reason, DivergenceReason::kDtype);
  EXPECT_NE(f.detail.find("differs in dtype torch.float64 vs torch.float32"),
            std::string::npos)
      << f.detail;
  // Made by a dumped op (a cast the dump shows): that op is the answer,
  // not the input.
  Stream t;
  t.Tensor("Tensor.double.0.forward", "input.0", 0, kX)
      .Tensor("Tensor.double.0.forward", "output.0", 0, kX)
      .Tensor("Tensor.__truediv__.0.forward", "input.0", 0, kX);
  t.rows()[1].messages.push_back("dtype torch.float64 vs torch.float32");
  t.rows()[2].messages.push_back("dtype torch.float64 vs torch.float32");
  f = FindFirstDivergence(t.rows(), {});
  EXPECT_EQ(f.entry, "Tensor.double.0.forward");
}

TEST(DivergenceRuleTest, ArgumentNamesOfTheAtenSchemaWhereTheyDiffer) {
  // lockstep's probe records cross_entropy_loss's and softmax's ATen
  // arguments by position: label_smoothing is 5, softmax's dtype 2.
  auto named = [](const std::string& entry, const std::string& io) {
    Stream s;
    s.Tensor(entry, "input.0", 0, kX).Number(entry, io, 0.1, 0);
    return FindFirstDivergence(s.rows(), {}).detail;
  };
  EXPECT_EQ(named("Functional.cross_entropy.0.forward", "input.5")
                .rfind("argument `label_smoothing`: ", 0),
            0u);
  EXPECT_EQ(named("Functional.softmax.0.forward", "input.2")
                .rfind("argument `dtype`: ", 0),
            0u);
  EXPECT_EQ(named("Tensor.masked_fill.0.forward", "input.2")
                .rfind("argument `value`: ", 0),
            0u);
  // msprobe records a keyword argument by its name.
  EXPECT_EQ(named("Functional.cross_entropy.0.forward", "input.label_smoothing")
                .rfind("argument `label_smoothing`: ", 0),
            0u);
}

}  // namespace
}  // namespace lockstep
