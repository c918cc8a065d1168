#include "lockstep/torch/grad_scaler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>

// clip_grad.h uses torch::Tensor without including its declaration.
#include <torch/nn/utils/clip_grad.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lockstep/torch/overflow_status.h"

namespace lockstep {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

class GradScalerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::set_num_threads(2);
    at::manual_seed(1);
  }
};

at::Tensor Param(std::vector<int64_t> shape) {
  return at::randn(shape).set_requires_grad(true);
}

torch::optim::SGD Sgd(const std::vector<at::Tensor>& params) {
  return torch::optim::SGD(params, torch::optim::SGDOptions(0.1));
}

GradScaler Make(GradScalerOptions o = {}) {
  StatusOr<GradScaler> s = GradScaler::Create(o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(*s);
}

// Sets every parameter's gradient to `g` (same shape).
void SetGrad(const at::Tensor& p, const at::Tensor& g) {
  p.mutable_grad() = g.clone();
}

bool Contains(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST_F(GradScalerTest, ScaleMultipliesTheLossByTheScale) {
  GradScaler scaler = Make();
  at::Tensor loss = at::tensor({1.5f});
  EXPECT_EQ(scaler.Scale(loss).item<float>(), 1.5f * 65536.0f);
}

// The fused pass against a double reference, over sizes that cover the
// vector body and the tail, both dtypes, and a scale that is not a power of
// two. float x * float(1/s) is exactly the correctly rounded double product.
TEST_F(GradScalerTest, UnscaleMatchesDoubleReferenceOverSizesAndDtypes) {
  for (at::ScalarType dtype : {at::kFloat, at::kDouble}) {
    for (int64_t n : {0, 1, 7, 8, 9, 31, 1000, 300001}) {
      GradScalerOptions o;
      o.loss_scale.init_scale = 3000.0;
      GradScaler scaler = Make(o);
      at::Tensor p = at::zeros({n}, dtype).set_requires_grad(true);
      at::Tensor g = at::randn({n}, at::kDouble).mul(1e4).to(dtype);
      SetGrad(p, g);
      auto opt = Sgd({p});
      ASSERT_TRUE(scaler.Unscale(opt).ok());
      EXPECT_FALSE(scaler.found_inf(opt));
      at::Tensor ref = dtype == at::kFloat
                           ? g.to(at::kDouble).mul(double(float(1 / 3000.0)))
                           : g.mul(1 / 3000.0);
      at::Tensor got = p.grad().to(at::kDouble);
      ASSERT_TRUE(at::equal(got, ref.to(dtype).to(at::kDouble)))
          << "dtype " << dtype << " n " << n << " max diff "
          << (got - ref).abs().max().item<double>();
    }
  }
}

// An inf or NaN at any position of any gradient is found, including in
// gradients the fused kernel does not take (bf16, non-contiguous).
TEST_F(GradScalerTest, UnscaleFindsInfAndNaNAnywhere) {
  for (float bad : {kInf, -kInf, kNaN}) {
    for (int64_t pos : {0, 5, 16, 999}) {
      for (int which = 0; which < 3; ++which) {
        at::Tensor a = Param({1000});
        at::Tensor b = at::zeros({1000}, at::kBFloat16).requires_grad_(true);
        at::Tensor c = at::zeros({50, 20}).requires_grad_(true);
        SetGrad(a, at::ones({1000}));
        SetGrad(b, at::ones({1000}, at::kBFloat16));
        c.mutable_grad() = at::ones({20, 50}).t();  // non-contiguous
        at::Tensor target = which == 0   ? a.grad()
                            : which == 1 ? b.grad()
                                         : c.grad();
        if (target.dim() == 2) {
          target[pos / target.size(1)][pos % target.size(1)].fill_(bad);
        } else {
          target[pos].fill_(bad);
        }
        auto opt = Sgd({a, b, c});
        GradScaler scaler = Make();
        ASSERT_TRUE(scaler.Unscale(opt).ok());
        EXPECT_TRUE(scaler.found_inf(opt))
            << "value " << bad << " at " << pos << " of tensor " << which;
      }
    }
  }
}

TEST_F(GradScalerTest, LargeGradientsUnscaleTheSameOnTwoThreads) {
  at::Tensor g = at::randn({3 << 20});
  g[(3 << 20) - 5] = kInf;
  std::vector<at::Tensor> got;
  for (int threads : {1, 2}) {
    GradScalerOptions o;
    o.threads = threads;
    GradScaler scaler = Make(o);
    at::Tensor p = at::zeros({3 << 20}).requires_grad_(true);
    SetGrad(p, g);
    auto opt = Sgd({p});
    ASSERT_TRUE(scaler.Unscale(opt).ok());
    EXPECT_TRUE(scaler.found_inf(opt)) << threads << " threads";
    got.push_back(p.grad());
  }
  EXPECT_TRUE(at::equal(got[0], got[1]));
}

TEST_F(GradScalerTest, OverflowSkipsTheStepAndBacksOffThenStepsAgain) {
  at::Tensor p = Param({4});
  at::Tensor before = p.detach().clone();
  auto opt = Sgd({p});
  GradScaler scaler = Make();
  SetGrad(p, at::tensor({1.0f, kInf, 2.0f, 3.0f}));
  StatusOr<bool> stepped = scaler.Step(opt);
  ASSERT_TRUE(stepped.ok());
  EXPECT_FALSE(*stepped);
  EXPECT_TRUE(at::equal(p.detach(), before));
  ASSERT_TRUE(scaler.Update().ok());
  EXPECT_EQ(scaler.scale(), 32768.0);
  EXPECT_EQ(scaler.skipped(opt), 1);

  SetGrad(p, at::full({4}, 32768.0f));  // unscaled: 1.0
  stepped = scaler.Step(opt);
  ASSERT_TRUE(stepped.ok() && *stepped);
  EXPECT_TRUE(at::allclose(p.detach(), before - 0.1));
  ASSERT_TRUE(scaler.Update().ok());
  EXPECT_EQ(scaler.steps(opt), 1);
  EXPECT_EQ(scaler.state().growth_tracker(), 1);
}

TEST_F(GradScalerTest, ProtocolMisuseIsAnErrorStatus) {
  at::Tensor p = Param({3});
  SetGrad(p, at::ones({3}));
  auto opt = Sgd({p});
  GradScaler scaler = Make();
  Status s = scaler.Update();
  EXPECT_TRUE(Contains(s, "Update() without an Unscale() or Step()"))
      << s.ToString();
  ASSERT_TRUE(scaler.Unscale(opt).ok());
  s = scaler.Unscale(opt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(s, "already called for this optimizer")) << s.message();
  ASSERT_TRUE(scaler.Step(opt).ok());
  EXPECT_TRUE(Contains(scaler.Unscale(opt), "after Step()"));
  EXPECT_TRUE(Contains(scaler.Step(opt).status(), "Step() was already"));
  ASSERT_TRUE(scaler.Update().ok());
  EXPECT_TRUE(scaler.Step(opt).ok());  // a new iteration
}

// Unscale, clip, step with a power-of-two scale gives the same parameters
// as unscaled fp32 training with the same clipping.
TEST_F(GradScalerTest, ClippingAfterUnscaleMatchesUnscaledTraining) {
  at::Tensor w0 = at::randn({8, 4});
  at::Tensor x = at::randn({16, 4});
  std::vector<at::Tensor> results;
  for (bool scaled : {false, true}) {
    at::Tensor w = w0.clone().requires_grad_(true);
    auto opt = Sgd({w});
    GradScaler scaler = Make();
    at::Tensor loss = at::matmul(x, w.t()).pow(2).sum();
    (scaled ? scaler.Scale(loss) : loss).backward();
    if (scaled) {
      ASSERT_TRUE(scaler.Unscale(opt).ok());
    }
    double norm = torch::nn::utils::clip_grad_norm_({w}, 0.5);
    EXPECT_GT(norm, 0.5);  // the clip is active
    if (scaled) {
      ASSERT_TRUE(scaler.Step(opt).ok());
      ASSERT_TRUE(scaler.Update().ok());
    } else {
      opt.step();
    }
    results.push_back(w.detach());
  }
  EXPECT_TRUE(at::allclose(results[0], results[1], 1e-6, 1e-7));
}

struct TwoOptimizers {
  at::Tensor a = Param({2});
  at::Tensor b = Param({2});
  torch::optim::SGD opt_a = Sgd({a});
  torch::optim::SGD opt_b = Sgd({b});
  at::Tensor a0 = a.detach().clone();
  at::Tensor b0 = b.detach().clone();
  void Grads(bool a_inf, bool b_inf) {
    SetGrad(a, at::full({2}, a_inf ? kInf : 1.0f));
    SetGrad(b, at::full({2}, b_inf ? kInf : 1.0f));
  }
  bool AMoved() const { return !at::equal(a.detach(), a0); }
  bool BMoved() const { return !at::equal(b.detach(), b0); }
};

TEST_F(GradScalerTest, PerOptimizerModeSkipsOnlyTheOverflowingOne) {
  TwoOptimizers t;
  GradScaler scaler = Make();
  t.Grads(/*a_inf=*/true, /*b_inf=*/false);
  ASSERT_FALSE(*scaler.Step(t.opt_a));
  ASSERT_TRUE(*scaler.Step(t.opt_b));
  EXPECT_FALSE(t.AMoved());
  EXPECT_TRUE(t.BMoved());
  ASSERT_TRUE(scaler.Update().ok());
  EXPECT_EQ(scaler.scale(), 32768.0);  // the update saw a's overflow
}

TEST_F(GradScalerTest, JointModeSkipsAllWhenOneOverflows) {
  TwoOptimizers t;
  GradScalerOptions o;
  o.mode = StepMode::kJoint;
  GradScaler scaler = Make(o);
  t.Grads(/*a_inf=*/false, /*b_inf=*/true);
  StatusOr<bool> stepped = scaler.StepAll({&t.opt_a, &t.opt_b});
  ASSERT_TRUE(stepped.ok()) << stepped.status().ToString();
  EXPECT_FALSE(*stepped);
  EXPECT_FALSE(t.AMoved());
  EXPECT_FALSE(t.BMoved());
  EXPECT_EQ(scaler.skipped(t.opt_a), 1);
  ASSERT_TRUE(scaler.Update().ok());
  t.Grads(false, false);
  ASSERT_TRUE(*scaler.StepAll({&t.opt_a, &t.opt_b}));
  EXPECT_TRUE(t.AMoved() && t.BMoved());
}

TEST_F(GradScalerTest, JointModeRejectsUnscaleAfterTheDecision) {
  TwoOptimizers t;
  GradScalerOptions o;
  o.mode = StepMode::kJoint;
  GradScaler scaler = Make(o);
  t.Grads(false, false);
  ASSERT_TRUE(scaler.Step(t.opt_a).ok());
  Status s = scaler.Step(t.opt_b).status();
  EXPECT_TRUE(Contains(s, "after the joint step decision")) << s.ToString();
}

TEST_F(GradScalerTest, FixedScaleWithoutDropStepsThroughOverflow) {
  GradScalerOptions o;
  o.loss_scale = *ParseLossScaleSpec("fixed:1024");
  o.loss_scale.drop_overflow_update = false;
  GradScaler scaler = Make(o);
  at::Tensor p = Param({2});
  auto opt = Sgd({p});
  SetGrad(p, at::tensor({1.0f, kInf}));
  EXPECT_TRUE(*scaler.Step(opt));
  ASSERT_TRUE(scaler.Update().ok());
  EXPECT_EQ(scaler.scale(), 1024.0);
}

TEST_F(GradScalerTest, StatusCheckReadsTheStatusAndUpdateClearsIt) {
  FloatStatus status;
  GradScalerOptions o;
  o.check = OverflowCheck::kStatus;
  GradScaler no_status = Make(o);
  at::Tensor p = Param({2});
  auto opt = Sgd({p});
  SetGrad(p, at::ones({2}));
  EXPECT_TRUE(Contains(no_status.Unscale(opt), "has no FloatStatus"));
  o.status = &status;
  GradScaler scaler = Make(o);
  status.Set();
  EXPECT_FALSE(*scaler.Step(opt));
  ASSERT_TRUE(scaler.Update().ok());
  EXPECT_FALSE(status.Test());
  SetGrad(p, at::full({2}, kInf));  // values are not looked at
  EXPECT_TRUE(*scaler.Step(opt));
}

TEST_F(GradScalerTest, ParseLossScaleSpecAcceptsTheDocumentedForms) {
  StatusOr<LossScaleOptions> o = ParseLossScaleSpec("fixed:1024");
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->dynamic);
  EXPECT_EQ(o->init_scale, 1024.0);
  o = ParseLossScaleSpec("dynamic");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->rule, LossScaleRule::kPyTorch);
  o = ParseLossScaleSpec("dynamic:deepspeed");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->rule, LossScaleRule::kDeepSpeed);
  EXPECT_EQ(o->hysteresis, 2);
  StatusOr<GradScaler> s = GradScaler::FromSpec("dynamic:megatron");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->scale(), 4294967296.0);
}

TEST_F(GradScalerTest, ParseLossScaleSpecRejectsBadSpecsClearly) {
  struct Case {
    const char* spec;
    const char* problem;
  };
  for (Case c : {Case{"fixed", "fixed needs a scale"},
                 Case{"fixed:", "fixed needs a scale"},
                 Case{"fixed:0", "finite number > 0"},
                 Case{"fixed:-4", "finite number > 0"},
                 Case{"fixed:inf", "finite number > 0"},
                 Case{"fixed:nan", "finite number > 0"},
                 Case{"fixed:12x", "finite number > 0"},
                 Case{"fixed:1e300", "init_scale"},
                 Case{"dynamic:nope", "unknown preset 'nope'"},
                 Case{"static:8", "unknown kind"}}) {
    StatusOr<LossScaleOptions> o = ParseLossScaleSpec(c.spec);
    ASSERT_FALSE(o.ok()) << c.spec;
    EXPECT_TRUE(Contains(o.status(), c.problem)) << o.status().message();
    EXPECT_TRUE(Contains(o.status(), "fixed:SCALE or dynamic[:pytorch|"))
        << o.status().message();
  }
}

TEST_F(GradScalerTest, CreateRejectsInvalidOptionsNamingThem) {
  auto bad = [](auto mutate) {
    GradScalerOptions o;
    mutate(o);
    return GradScaler::Create(o).status();
  };
  EXPECT_TRUE(Contains(bad([](auto& o) { o.loss_scale.growth_factor = 1; }),
                       "growth_factor 1.0: must be finite and > 1"));
  EXPECT_TRUE(Contains(bad([](auto& o) { o.loss_scale.backoff_factor = 1.5; }),
                       "backoff_factor 1.5: must be in (0, 1)"));
  EXPECT_TRUE(Contains(bad([](auto& o) { o.loss_scale.init_scale = 0; }),
                       "init_scale 0.0"));
  EXPECT_TRUE(Contains(bad([](auto& o) { o.loss_scale.init_scale = kNaN; }),
                       "init_scale nan"));
  EXPECT_TRUE(Contains(bad([](auto& o) { o.threads = -1; }), "threads -1"));
}

}  // namespace
}  // namespace lockstep
