// The probe at levels L0 and mix: ModuleScope entries with parameters,
// construct.json parents and parameters_grad entries.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "lockstep/torch/probe.h"
#include "torch/probe_testing.h"

namespace lockstep {
namespace {

using testing::Entry;
using testing::ExpectStatsOf;
using testing::Item;
using testing::Names;
using testing::ProbeTest;
using testing::TwoLayer;

class ProbeModuleTest : public ProbeTest {
 protected:
  // One step: `forwards` forwards of the net summed, `backwards` backward
  // passes. RegisterModel comes before Start, as in examples/cpp/lenet.cc.
  DumpFile Run(ProbeLevel level, int forwards = 1, int backwards = 1) {
    auto p = MakeProbe(Config(ProbeTask::kStatistics, level));
    p->RegisterModel(*net_);
    EXPECT_TRUE(p->Start().ok());
    for (int b = 0; b < backwards; ++b) {
      at::Tensor loss;
      for (int f = 0; f < forwards; ++f) {
        at::Tensor s = at::sum(net_->Forward(p.get(), x_));
        loss = f == 0 ? s : loss + s;
      }
      loss.backward();
    }
    EXPECT_TRUE(p->Stop().ok());
    return ReadDump();
  }
  ConstructMap Construct() const {
    StatusOr<ConstructMap> c = ReadConstructJson(RankDir() + "/construct.json");
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : ConstructMap();
  }

  TwoLayer net_;
  at::Tensor x_ = at::linspace(-1, 1, 6).reshape({2, 3});
};

bool IsModule(const std::string& n) { return n.rfind("Module.", 0) == 0; }

TEST_F(ProbeModuleTest, L0DumpsModulesAndParameterGradsOnly) {
  DumpFile d = Run(ProbeLevel::kL0);
  EXPECT_EQ(d.level, "L0");
  std::vector<std::string> names = Names(d);
  ASSERT_EQ(names.size(), 8u) << ::testing::PrintToString(names);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
            (std::vector<std::string>{"Module.fc1.Linear.forward.0",
                                      "Module.fc2.Linear.forward.0",
                                      "Module.TwoLayer.forward.0"}));
  EXPECT_EQ(
      std::set<std::string>(names.begin() + 3, names.end()),
      (std::set<std::string>{
          "Module.TwoLayer.backward.0", "Module.fc2.Linear.backward.0",
          "Module.fc1.Linear.backward.0", "Module.fc1.Linear.parameters_grad.0",
          "Module.fc2.Linear.parameters_grad.0"}));
  for (const std::string& n : names) EXPECT_TRUE(IsModule(n)) << n;
}

TEST_F(ProbeModuleTest, ModuleEntryHoldsInputsOutputsAndParameters) {
  DumpFile d = Run(ProbeLevel::kL0);
  const PyValue& fc1 = Entry(d, "Module.fc1.Linear.forward.0");
  ExpectStatsOf(Item(fc1, "input_args", 0), x_, "fc1 input");
  at::Tensor h = at::linear(x_, net_->fc1->weight, net_->fc1->bias);
  ExpectStatsOf(Item(fc1, "output", 0), h, "fc1 output");
  const PyValue* params = fc1.Find("parameters");
  ASSERT_NE(params, nullptr);
  ASSERT_NE(params->Find("weight"), nullptr);
  ASSERT_NE(params->Find("bias"), nullptr);
  ExpectStatsOf(*params->Find("weight"), net_->fc1->weight, "fc1.weight");
  ExpectStatsOf(*params->Find("bias"), net_->fc1->bias, "fc1.bias");
  // The root module has no parameters of its own.
  const PyValue* root =
      Entry(d, "Module.TwoLayer.forward.0").Find("parameters");
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->fields().empty());
}

TEST_F(ProbeModuleTest, ModuleBackwardHoldsOutputAndInputGradients) {
  DumpFile d = Run(ProbeLevel::kL0);
  std::vector<std::string> names = Names(d);
  auto at = [&](const char* n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  // Backward runs outside in: the root's, then fc2's, then fc1's.
  EXPECT_LT(at("Module.TwoLayer.backward.0"),
            at("Module.fc2.Linear.backward.0"));
  EXPECT_LT(at("Module.fc2.Linear.backward.0"),
            at("Module.fc1.Linear.backward.0"));
  // loss = sum(net(x)): the gradient flowing into the root is all ones.
  const PyValue& root = Entry(d, "Module.TwoLayer.backward.0");
  at::Tensor y = net_->Forward(nullptr, x_);
  ExpectStatsOf(Item(root, "input", 0), at::ones_like(y), "root grad in");
  // x needs no gradient: fc1 passes none on.
  const PyValue& fc1 = Entry(d, "Module.fc1.Linear.backward.0");
  ASSERT_EQ(fc1.Find("output")->items().size(), 1u);
  EXPECT_TRUE(fc1.Find("output")->items()[0].is_none());
  // fc2's input gradient is the gradient of relu(fc1(x)): ones @ W2.
  const PyValue& fc2 = Entry(d, "Module.fc2.Linear.backward.0");
  at::Tensor g = at::ones_like(y).mm(net_->fc2->weight.detach());
  ExpectStatsOf(Item(fc2, "output", 0), g, "fc2 grad out");
}

TEST_F(ProbeModuleTest, ParametersGradHoldsTheGradients) {
  DumpFile d = Run(ProbeLevel::kL0);
  const PyValue& g = Entry(d, "Module.fc2.Linear.parameters_grad.0");
  ASSERT_EQ(g.kind(), PyValue::Kind::kDict);
  ASSERT_EQ(g.fields().size(), 2u);
  EXPECT_EQ(g.fields()[0].first, "weight");
  EXPECT_EQ(g.fields()[1].first, "bias");
  ExpectStatsOf(Item(g, "weight", 0), net_->fc2->weight.grad(), "fc2 dW");
  ExpectStatsOf(Item(g, "bias", 0), net_->fc2->bias.grad(), "fc2 db");
}

TEST_F(ProbeModuleTest, MixInterleavesOperatorsAndModulesWithParents) {
  DumpFile d = Run(ProbeLevel::kMix);
  std::vector<std::string> names = Names(d);
  std::vector<std::string> forward = {
      "Functional.linear.0.forward", "Module.fc1.Linear.forward.0",
      "Functional.relu.0.forward",   "Functional.linear.1.forward",
      "Module.fc2.Linear.forward.0", "Module.TwoLayer.forward.0"};
  ASSERT_GE(names.size(), forward.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 6),
            forward);
  std::set<std::string> rest(names.begin() + 6, names.end());
  for (const char* n :
       {"Functional.linear.1.backward", "Functional.relu.0.backward",
        "Functional.linear.0.backward", "Module.fc1.Linear.parameters_grad.0",
        "Module.fc2.Linear.parameters_grad.0"}) {
    EXPECT_EQ(rest.count(n), 1u) << n;
  }
  ConstructMap c = Construct();
  auto parent = [&](const std::string& n) {
    auto it = c.find(n);
    return it == c.end()          ? std::string("<absent>")
           : it->second.is_none() ? std::string("None")
                                  : it->second.as_str();
  };
  EXPECT_EQ(parent("Functional.linear.0.forward"),
            "Module.fc1.Linear.forward.0");
  EXPECT_EQ(parent("Module.fc1.Linear.forward.0"), "Module.TwoLayer.forward.0");
  EXPECT_EQ(parent("Functional.relu.0.forward"), "Module.TwoLayer.forward.0");
  EXPECT_EQ(parent("Functional.linear.1.forward"),
            "Module.fc2.Linear.forward.0");
  EXPECT_EQ(parent("Module.TwoLayer.forward.0"), "None");
  EXPECT_EQ(parent("Torch.sum.0.forward"), "None");
}

TEST_F(ProbeModuleTest, L1IgnoresModuleScopes) {
  DumpFile d = Run(ProbeLevel::kL1);
  for (const std::string& n : Names(d)) EXPECT_FALSE(IsModule(n)) << n;
  // L1 has no parents to record: no construct.json (msprobe writes "{}").
  EXPECT_FALSE(std::filesystem::exists(RankDir() + "/construct.json"));
}

TEST_F(ProbeModuleTest, RepeatedCallsAndBackwardsAreNumbered) {
  DumpFile d = Run(ProbeLevel::kL0, /*forwards=*/2, /*backwards=*/2);
  std::set<std::string> names;
  for (const std::string& n : Names(d)) names.insert(n);
  for (const char* n :
       {"Module.fc1.Linear.forward.0", "Module.fc1.Linear.forward.1",
        "Module.fc1.Linear.forward.2", "Module.fc1.Linear.forward.3",
        "Module.TwoLayer.forward.3", "Module.fc1.Linear.parameters_grad.0",
        "Module.fc1.Linear.parameters_grad.1"}) {
    EXPECT_EQ(names.count(n), 1u) << n;
  }
  // One parameters_grad per backward pass, however often a module ran.
  EXPECT_EQ(names.count("Module.fc1.Linear.parameters_grad.2"), 0u);
  EXPECT_EQ(names.count("Module.fc1.Linear.forward.4"), 0u);
}

// Regression: the gradient hooks of a model registered before Start (as
// lenet does) never recorded, since they kept the session of that moment.
TEST_F(ProbeModuleTest, ParameterGradsRecordedWhateverTheRegistrationTime) {
  auto p = MakeProbe(Config(ProbeTask::kStatistics, ProbeLevel::kL0));
  auto step = [&] {
    at::sum(net_->Forward(p.get(), x_)).backward();
    return p->entries_in_step();
  };
  ASSERT_TRUE(p->Start().ok());
  p->RegisterModel(*net_);  // after Start
  EXPECT_EQ(step(), 8);  // 3 module forwards and backwards, 2 parameters_grad
  ASSERT_TRUE(p->Stop().ok());
  ASSERT_TRUE(p->Start().ok());  // restarted: the hooks still record
  EXPECT_EQ(step(), 8);
  p->RegisterModel(*net_);  // registering again replaces, not doubles
  ASSERT_TRUE(p->Step().ok());
  EXPECT_EQ(step(), 8);
  ASSERT_TRUE(p->Stop().ok());
  std::vector<std::string> names = Names(ReadDump(1));
  EXPECT_EQ(std::count(names.begin(), names.end(),
                       "Module.fc1.Linear.parameters_grad.0"),
            1);
}

TEST_F(ProbeModuleTest, ModuleScopeWithoutAnActiveProbeDoesNothing) {
  auto p = MakeProbe(Config(ProbeTask::kStatistics, ProbeLevel::kL0));
  p->RegisterModel(*net_);
  at::Tensor y = net_->Forward(p.get(), x_);  // not started
  at::Tensor z = net_->Forward(nullptr, x_);
  EXPECT_TRUE(at::equal(y, z));
  EXPECT_FALSE(testing::fs::exists(Config().dump_path));
}

}  // namespace
}  // namespace lockstep
