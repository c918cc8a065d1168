// The first-divergence rule on hand-built rows: each rule of
// first_divergence.h, and the cases where it must stay silent. Inserted and
// missing calls, calls walked past and dtype changes are in
// divergence_gaps_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "compare/divergence_testing.h"
#include "lockstep/compare/first_divergence.h"
#include "lockstep/compare/verdict.h"

namespace lockstep {
namespace {

using testing::kFp32Floor;
using testing::kW;
using testing::kX;
using testing::kY;
using testing::kZ;
using testing::Stream;

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
