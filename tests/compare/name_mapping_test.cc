#include "lockstep/compare/name_mapping.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lockstep
