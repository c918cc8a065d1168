// The first-divergence rule on hand-built rows where the runs' calls
// differ: calls inserted or missing (and what the calls after the gap
// show), calls that return their input or only agreeing values, walked
// past, and dtypes that differ.
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

using testing::kW;
using testing::kX;
using testing::kY;
using testing::kZ;
using testing::Stream;

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

}  // namespace
}  // namespace lockstep
