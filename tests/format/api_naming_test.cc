#include "lockstep/format/api_naming.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

struct NameCase {
  const char* aten;
  const char* msprobe;
};

class MsprobeApiNameTest : public ::testing::TestWithParam<NameCase> {};

TEST_P(MsprobeApiNameTest, MapsAtenOperatorToMsprobePrefix) {
  EXPECT_EQ(MsprobeApiName(GetParam().aten), GetParam().msprobe)
      << GetParam().aten;
}

INSTANTIATE_TEST_SUITE_P(
    Mapping, MsprobeApiNameTest,
    ::testing::Values(
        // torch.nn.functional calls.
        NameCase{"aten::linear", "Functional.linear"},
        NameCase{"aten::conv2d", "Functional.conv2d"},
        NameCase{"aten::relu", "Functional.relu"},
        NameCase{"aten::_softmax", "Functional.softmax"},
        NameCase{"aten::_log_softmax", "Functional.log_softmax"},
        NameCase{"aten::max_pool2d", "Functional.max_pool2d"},
        NameCase{"aten::max_pool2d_with_indices", "Functional.max_pool2d"},
        NameCase{"aten::cross_entropy_loss", "Functional.cross_entropy"},
        NameCase{"aten::feature_dropout", "Functional.dropout2d"},
        // torch.* functions.
        NameCase{"aten::add", "Torch.add"}, NameCase{"aten::cos", "Torch.cos"},
        NameCase{"aten::sum", "Torch.sum"},
        NameCase{"aten::matmul", "Torch.matmul"},
        // Tensor-only methods and in-place variants.
        NameCase{"aten::add_", "Tensor.add_"},
        NameCase{"aten::mul_", "Tensor.mul_"},
        NameCase{"aten::view", "Tensor.view"}, NameCase{"aten::t", "Tensor.t"},
        NameCase{"aten::contiguous", "Tensor.contiguous"},
        NameCase{"aten::copy_", "Tensor.copy_"},
        // Internal operators: the Aten fallback.
        NameCase{"aten::_foo", "Aten._foo"},
        NameCase{"aten::_log_softmax_backward_data",
                 "Aten._log_softmax_backward_data"},
        // Overload names are dropped.
        NameCase{"aten::add.Tensor", "Torch.add"},
        NameCase{"aten::add_.Scalar", "Tensor.add_"},
        NameCase{"aten::sum.dim_IntList", "Torch.sum"},
        NameCase{"aten::_softmax.out", "Functional.softmax"},
        NameCase{"aten::_foo.bar", "Aten._foo"},
        // torch.distributed's collectives (c10d:: operators).
        NameCase{"c10d::allreduce_", "Distributed.all_reduce"},
        NameCase{"c10d::allgather_", "Distributed.all_gather"},
        NameCase{"c10d::send", "Distributed.send"},
        NameCase{"c10d::recv_", "Distributed.recv"},
        NameCase{"c10d::barrier", "Distributed.barrier"},
        NameCase{"c10d::unknown_", ""},
        // Not aten: not dumped.
        NameCase{"", ""}, NameCase{"aten::", ""}, NameCase{"aten::.out", ""},
        NameCase{"prim::ListConstruct", ""},
        NameCase{"autograd::engine::evaluate_function: AddBackward0", ""},
        NameCase{"my_ops::linear", ""}, NameCase{"linear", ""},
        NameCase{"aten:linear", ""}, NameCase{"## forward ##", ""}));

TEST(ModuleClassNameTest, DropsNamespacesTemplatesAndImpl) {
  EXPECT_EQ(ModuleClassName("torch::nn::Conv2dImpl"), "Conv2d");
  EXPECT_EQ(ModuleClassName("torch::nn::LinearImpl"), "Linear");
  EXPECT_EQ(ModuleClassName("LeNetImpl"), "LeNet");
  EXPECT_EQ(ModuleClassName("Net"), "Net");
  EXPECT_EQ(ModuleClassName("a::b::Block<float>"), "Block");
  // "Impl" alone is a class name, not a suffix to drop.
  EXPECT_EQ(ModuleClassName("Impl"), "Impl");
  EXPECT_EQ(ModuleClassName("ns::Impl"), "Impl");
  // Only a trailing Impl goes.
  EXPECT_EQ(ModuleClassName("ImplicitNet"), "ImplicitNet");
}

TEST(MsprobeModuleNameTest, JoinsPathAndClass) {
  EXPECT_EQ(MsprobeModuleName("conv1", "torch::nn::Conv2dImpl"),
            "Module.conv1.Conv2d");
  EXPECT_EQ(MsprobeModuleName("features.0", "torch::nn::LinearImpl"),
            "Module.features.0.Linear");
  EXPECT_EQ(MsprobeModuleName("", "LeNetImpl"), "Module.LeNet");
}

TEST(ApiCallCounterTest, CountsEachApiFromZeroAndResets) {
  ApiCallCounter c;
  EXPECT_EQ(c.Next("Torch.add"), 0);
  EXPECT_EQ(c.Next("Torch.add"), 1);
  EXPECT_EQ(c.Next("Functional.linear"), 0);
  EXPECT_EQ(c.Next("Torch.add"), 2);
  c.Reset();
  EXPECT_EQ(c.Next("Torch.add"), 0);
}

}  // namespace
}  // namespace lockstep
