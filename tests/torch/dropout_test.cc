#include "lockstep/torch/dropout.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "lockstep/torch/seed.h"

namespace lockstep {
namespace {

namespace nn = torch::nn;

// Dropout2d and Dropout3d one level down, to check the walk recurses.
struct Inner : nn::Module {
  Inner() {
    d2 = register_module("d2", nn::Dropout2d(0.2));
    d3 = register_module("d3", nn::Dropout3d(0.3));
  }
  nn::Dropout2d d2{nullptr};
  nn::Dropout3d d3{nullptr};
};

struct Net : nn::Module {
  Net() {
    fc1 = register_module("fc1", nn::Linear(8, 16));
    drop = register_module("drop", nn::Dropout(0.5));
    fc2 = register_module("fc2", nn::Linear(16, 8));
    alpha = register_module("alpha", nn::AlphaDropout(0.25));
    feature = register_module("feature", nn::FeatureAlphaDropout(0.125));
    inner = register_module("inner", std::make_shared<Inner>());
  }
  // x: [N, 8]; the 2d/3d dropouts see it as [N, 8, 1, 1] / [N, 8, 1, 1, 1].
  at::Tensor Forward(at::Tensor x, bool skip_dropout) {
    auto maybe = [&](auto& m, at::Tensor t) {
      return skip_dropout ? t : m->forward(t);
    };
    x = maybe(drop, fc1->forward(x));
    x = maybe(alpha, fc2->forward(x));
    x = maybe(feature, x);
    x = skip_dropout
            ? x
            : inner->d2->forward(x.reshape({-1, 8, 1, 1})).reshape({-1, 8});
    x = skip_dropout
            ? x
            : inner->d3->forward(x.reshape({-1, 8, 1, 1, 1})).reshape({-1, 8});
    return x;
  }
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::Dropout drop{nullptr};
  nn::AlphaDropout alpha{nullptr};
  nn::FeatureAlphaDropout feature{nullptr};
  std::shared_ptr<Inner> inner;
};

class DropoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::set_num_threads(2);
    SeedAll(1, false);
  }
};

TEST_F(DropoutTest, FindsEveryVariantWithNameKindAndP) {
  Net net;
  DropoutOffRecord r = DropoutOff(net);
  ASSERT_EQ(r.sites().size(), 5u);
  std::vector<std::string> got;
  for (const auto& s : r.sites()) {
    got.push_back(s.name + " " + s.kind + " " + std::to_string(s.p));
  }
  EXPECT_EQ(got,
            (std::vector<std::string>{
                "drop Dropout 0.500000", "alpha AlphaDropout 0.250000",
                "feature FeatureAlphaDropout 0.125000",
                "inner.d2 Dropout2d 0.200000", "inner.d3 Dropout3d 0.300000"}));
  EXPECT_EQ(net.drop->options.p(), 0.0);
  EXPECT_EQ(net.alpha->options.p(), 0.0);
  EXPECT_EQ(net.feature->options.p(), 0.0);
  EXPECT_EQ(net.inner->d2->options.p(), 0.0);
  EXPECT_EQ(net.inner->d3->options.p(), 0.0);
}

TEST_F(DropoutTest, RestorePutsBackTheOriginalP) {
  Net net;
  DropoutOffRecord r = DropoutOff(net);
  r.Restore();
  EXPECT_EQ(net.drop->options.p(), 0.5);
  EXPECT_EQ(net.alpha->options.p(), 0.25);
  EXPECT_EQ(net.feature->options.p(), 0.125);
  EXPECT_EQ(net.inner->d2->options.p(), 0.2);
  EXPECT_EQ(net.inner->d3->options.p(), 0.3);
  r.Restore();  // idempotent
  EXPECT_EQ(net.drop->options.p(), 0.5);
}

TEST_F(DropoutTest, TrainModeOutputEqualsTheNoDropoutNetAfterDropoutOff) {
  Net net;
  net.train();
  at::Tensor x = at::randn({4, 8});
  at::Tensor want = net.Forward(x, /*skip_dropout=*/true);
  EXPECT_FALSE(at::equal(net.Forward(x, false), want));  // dropout is on
  DropoutOffRecord r = DropoutOff(net);
  ASSERT_TRUE(net.is_training());
  EXPECT_TRUE(at::equal(net.Forward(x, false), want));
  r.Restore();
  EXPECT_FALSE(at::equal(net.Forward(x, false), want));
}

TEST_F(DropoutTest, DropoutOffDrawsNoRandomNumbers) {
  Net net;
  DropoutOff(net);
  at::Tensor x = at::ones({4, 8});
  SeedAll(9, false);
  net.Forward(x, false);
  at::Tensor after_forward = at::rand({16});
  SeedAll(9, false);
  EXPECT_TRUE(at::equal(at::rand({16}), after_forward));
}

TEST_F(DropoutTest, RootDropoutModuleIsHandled) {
  nn::Dropout d(0.7);
  DropoutOffRecord r = DropoutOff(*d);
  ASSERT_EQ(r.sites().size(), 1u);
  EXPECT_EQ(r.sites()[0].name, "");
  EXPECT_EQ(d->options.p(), 0.0);
  r.Restore();
  EXPECT_EQ(d->options.p(), 0.7);
}

TEST_F(DropoutTest, ModuleSharedByTwoParentsIsRecordedOnce) {
  struct Twice : nn::Module {
    Twice() {
      nn::Dropout d(0.4);
      a = register_module("a", d);
      b = register_module("b", d);
    }
    nn::Dropout a{nullptr}, b{nullptr};
  } net;
  DropoutOffRecord r = DropoutOff(net);
  EXPECT_EQ(r.sites().size(), 1u);
  r.Restore();
  EXPECT_EQ(net.a->options.p(), 0.4);
}

TEST_F(DropoutTest, ModuleWithoutDropoutIsUntouched) {
  nn::Linear l(2, 2);
  EXPECT_TRUE(DropoutOff(*l).sites().empty());
}

}  // namespace
}  // namespace lockstep
