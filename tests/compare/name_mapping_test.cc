#include "lockstep/compare/name_mapping.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

TEST(NameMappingTest, ApiMappingAsMsprobe) {
  // Mint and MintFunctional by prefix, every occurrence replaced.
  EXPECT_EQ(MsApiMappedName("Mint.cos.0.forward.input.0"),
            "Torch.cos.0.forward.input.0");
  EXPECT_EQ(MsApiMappedName("MintFunctional.relu.2.backward.output.0"),
            "Functional.relu.2.backward.output.0");
  EXPECT_EQ(MsApiMappedName("Mint.Mint.0.forward.input.0"),
            "Torch.Torch.0.forward.input.0");
  // The table: the API (first two fields) replaced.
  EXPECT_EQ(MsApiMappedName("Functional.add.3.forward.input.1"),
            "Torch.add.3.forward.input.1");
  EXPECT_EQ(
      MsApiMappedName("Functional.adaptive_avg_pool2d.0.forward.output.0"),
      "Functional.adaptive_avg_pool2d.0.forward.output.0");
  EXPECT_EQ(MsApiMappedName("Tensor.view.1.forward.input.0"),
            "Tensor.view.1.forward.input.0");
  // Not in the table, and not an API row: unchanged.
  EXPECT_EQ(
      MsApiMappedName("Functional.flash_attention_score.0.forward.input.0"),
      "Functional.flash_attention_score.0.forward.input.0");
  EXPECT_EQ(MsApiMappedName("Cell.fc.Dense.forward.0.input.0"),
            "Cell.fc.Dense.forward.0.input.0");
  EXPECT_EQ(MsApiMappedName("nodots"), "nodots");
  EXPECT_EQ(MsApiMappedName("Functional.add"), "Torch.add");
}

TEST(NameMappingTest, CellMappingAsMsprobe) {
  CellMapping none;
  // Cell becomes Module; rows without a call direction or parameter
  // gradient get no key (msprobe's N/A).
  EXPECT_EQ(CellMappedName("Cell.fc2.Dense.forward.0.input.0", none),
            "Module.fc2.Dense.forward.0.input.0");
  EXPECT_EQ(CellMappedName("Cell.fc2.Dense.parameters_grad.weight", none),
            "Module.fc2.Dense.parameters_grad.weight");
  EXPECT_EQ(CellMappedName("Cell.fc2.Dense.forward", none), std::nullopt);
  EXPECT_EQ(CellMappedName("", none), std::nullopt);
  // API rows pass through (no "Cell" in them).
  EXPECT_EQ(CellMappedName("Functional.relu.0.forward.input.0", none),
            "Functional.relu.0.forward.input.0");

  CellMapping m = {{"fc2.Dense", "fc2.Linear"},
                   {"conv1.Conv2d", "conv3.Conv2d"},
                   {"net.", "model."}};
  // The whole cell path named: its value, nothing else.
  EXPECT_EQ(CellMappedName("Cell.fc2.Dense.forward.0.output.0", m),
            "Module.fc2.Linear.forward.0.output.0");
  // Otherwise each key found in it is replaced, in file order.
  EXPECT_EQ(CellMappedName("Cell.net.conv1.Conv2d.backward.1.input.0", m),
            "Module.model.conv3.Conv2d.backward.1.input.0");
  EXPECT_EQ(CellMappedName("Cell.other.ReLU.forward.0.input.0", m),
            "Module.other.ReLU.forward.0.input.0");
}

OpRow Row(std::string entry, std::string rest, RowState state) {
  OpRow r;
  r.entry = std::move(entry);
  r.name = r.entry + rest;
  r.state = state;
  return r;
}

// msprobe 26.2's keys for a user's API mapping (-am FILE), each checked
// live with its modify_compare_data_with_user_mapping on msprobe's own
// cross-framework dumps (tests/python/cross_framework_live_test.py pairs
// whole tables).
TEST(NameMappingTest, UserApiMappingAsMsprobe) {
  auto parsed = ParseApiMappingFile(
      "- ms_api: Functional.flash_attention_score\n"
      "  pt_api: NPU.npu_fusion_attention\n"
      "  ms_args: [0, 1, 2, attn_mask, pre_tokens]\n"
      "  pt_args: [1, 0, 2, atten_mask, 3]\n"
      "  ms_output: [0, 1, 2, 3]\n"
      "  pt_output: [0, 1, 2, 3]\n"
      "- ms_api: Cell.network\n"
      "  pt_api: Module.net\n"
      "  ms_parameters: [weight]\n"
      "  pt_parameters: [weight]\n"
      "  ms_parameters_grad: [weight]\n"
      "  pt_parameters_grad: [weight]\n"
      "- ms_api: Mint.cos\n"
      "  pt_api: Torch.absent\n",
      "am.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  const std::string fa = "Functional.flash_attention_score.0.forward";
  const std::string fb = "Functional.flash_attention_score.0.backward";
  const std::string cell = "Cell.network.fc.Dense.forward.0";
  std::vector<OpRow> target = {
      Row(fa, ".input.0", RowState::kInput),
      Row(fa, ".input.3", RowState::kInput),
      Row(fa, ".input.attn_mask", RowState::kInput),
      Row(fa, ".input.pre_tokens", RowState::kInput),
      Row(fa, ".output.2", RowState::kOutput),
      Row(fb, ".input.0", RowState::kInput),
      Row(cell, ".parameters.weight", RowState::kParameters),
      Row("Cell.network.fc.Dense.parameters_grad", ".weight",
          RowState::kParametersGrad),
      Row("Mint.cos.0.forward", ".input.0", RowState::kInput),
      Row("Functional.add.0.forward", ".input.0", RowState::kInput)};
  std::vector<OpRow> baseline = {
      Row("NPU.npu_fusion_attention.0.forward", ".input.0", RowState::kInput),
      Row("Module.net.fc.Dense.forward.0", ".input.0", RowState::kInput),
      Row("Torch.cos.0.forward", ".input.0", RowState::kInput)};
  std::vector<std::string> names =
      UserApiMappedNames(*parsed, target, baseline);
  const std::string pa = "NPU.npu_fusion_attention.0.forward";
  EXPECT_EQ(names,
            (std::vector<std::string>{
                pa + ".input.1",           // 0 -> 1
                pa + ".input.3abandoned",  // 3 not listed
                pa + ".input.atten_mask",  // a kwarg by name
                pa + ".input.3",           // a kwarg -> position
                pa + ".output.2",          //
                "NPU.npu_fusion_attention.0.backward.input.1",  // args
                "Module.net.fc.Dense.forward.0.parameters.weight",
                // msprobe never maps parameter gradients.
                "Module.net.fc.Dense.parameters_grad.weightabandoned",
                // Torch.absent is not in the baseline: built-in name.
                "Torch.cos.0.forward.input.0", "Torch.add.0.forward.input.0"}));
}

TEST(NameMappingTest, UserApiMappingLastEntryWinsAndUnequalListsAreSkipped) {
  auto parsed = ParseApiMappingFile(
      "- ms_api: Tensor.__add__\n  pt_api: Tensor.__add__\n"
      "  ms_args: [0]\n  pt_args: [0]\n"
      "- ms_api: Tensor.__add__\n  pt_api: Tensor.__add__\n"
      "  ms_args: [1, 0]\n  pt_args: [0, 1]\n"
      "- ms_api: Tensor.__add__\n  pt_api: Tensor.__add__\n"
      "  ms_args: [0, 1]\n  pt_args: [0]\n",
      "am.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  std::vector<std::string> warnings;
  std::vector<ApiMappingEntry> usable =
      UsableApiMappings(std::move(*parsed), &warnings);
  ASSERT_EQ(usable.size(), 2u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("line 9"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("ms_args has 2 items and pt_args 1"),
            std::string::npos)
      << warnings[0];
  const std::string add = "Tensor.__add__.0.forward";
  std::vector<OpRow> rows = {Row(add, ".input.0", RowState::kInput),
                             Row(add, ".input.1", RowState::kInput),
                             Row(add, ".output.0", RowState::kOutput)};
  EXPECT_EQ(UserApiMappedNames(usable, rows, rows),
            (std::vector<std::string>{add + ".input.1", add + ".input.0",
                                      add + ".output.0abandoned"}));
}

}  // namespace
}  // namespace lockstep
