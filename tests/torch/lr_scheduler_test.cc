// LrScheduler on real LibTorch optimizers: every group gets the schedule's
// lr, the optimizer's update uses it, and checkpoints restore it.
#include "lockstep/torch/lr_scheduler.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <vector>

namespace lockstep {
namespace {

LrSchedule Cosine(int64_t decay_steps) {
  ScheduleConfig c;
  c.kind = ScheduleKind::kCosineDecay;
  c.max_lr = 0.5;
  c.min_lr = 0.01;
  c.decay_steps = decay_steps;
  return *LrSchedule::Create(c);
}

// Two parameter groups with different initial lrs.
struct TwoGroups {
  TwoGroups() {
    at::set_num_threads(2);
    a = at::ones({3}).set_requires_grad(true);
    b = at::ones({2}).set_requires_grad(true);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(std::vector<at::Tensor>{a});
    groups.emplace_back(std::vector<at::Tensor>{b},
                        std::make_unique<torch::optim::SGDOptions>(7.0));
    sgd = std::make_unique<torch::optim::SGD>(groups,
                                              torch::optim::SGDOptions(3.0));
  }
  std::vector<double> Lrs() const {
    std::vector<double> out;
    for (auto& g : sgd->param_groups()) out.push_back(g.options().get_lr());
    return out;
  }
  at::Tensor a, b;
  std::unique_ptr<torch::optim::SGD> sgd;
};

TEST(LrSchedulerTest, SetsEveryGroupOnCreateAndEachStep) {
  TwoGroups t;
  StatusOr<LrScheduler> s = LrScheduler::Create(t.sgd.get(), Cosine(10));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(t.Lrs(), (std::vector<double>{0.5, 0.5}));
  for (int64_t step = 1; step <= 12; ++step) {
    ASSERT_TRUE(s->Step().ok());
    double want = Cosine(10).At(step);
    ASSERT_EQ(t.Lrs(), (std::vector<double>{want, want})) << step;
  }
  EXPECT_EQ(t.Lrs()[0], 0.01);  // past the end: min_lr, exactly
}

TEST(LrSchedulerTest, OptimizerUpdateUsesTheScheduledLr) {
  TwoGroups t;
  LrScheduler s = *LrScheduler::Create(t.sgd.get(), Cosine(4));
  ASSERT_TRUE(s.Step().ok());  // lr = At(1)
  t.sgd->zero_grad();
  (t.a.sum() + 2 * t.b.sum()).backward();
  t.sgd->step();
  double lr = Cosine(4).At(1);
  EXPECT_DOUBLE_EQ(t.a[0].item<float>(), static_cast<float>(1 - lr));
  EXPECT_FLOAT_EQ(t.b[0].item<float>(), static_cast<float>(1 - 2 * lr));
}

TEST(LrSchedulerTest, CheckpointRestoresStepAndLrIntoAnotherOptimizer) {
  TwoGroups t;
  LrScheduler s = *LrScheduler::Create(t.sgd.get(), Cosine(100));
  for (int i = 0; i < 37; ++i) ASSERT_TRUE(s.Step().ok());
  std::string saved = s.SaveState();

  at::Tensor p = at::zeros({4}).set_requires_grad(true);
  torch::optim::Adam adam({p}, torch::optim::AdamOptions(1.0));
  LrScheduler r = *LrScheduler::Create(&adam, Cosine(5));
  ASSERT_TRUE(r.LoadState(saved).ok());
  EXPECT_EQ(r.step(), 37);
  EXPECT_EQ(adam.param_groups()[0].options().get_lr(), Cosine(100).At(37));
  ASSERT_TRUE(r.Step().ok());
  EXPECT_EQ(adam.param_groups()[0].options().get_lr(), Cosine(100).At(38));
}

TEST(LrSchedulerTest, BadCheckpointLeavesSchedulerAndOptimizerUnchanged) {
  TwoGroups t;
  LrScheduler s = *LrScheduler::Create(t.sgd.get(), Cosine(10));
  ASSERT_TRUE(s.Step().ok());
  std::string good = s.SaveState();
  std::string other = good;
  other.replace(0, good.find('\n'), "lockstep-lr-schedule 7");
  Status v = s.LoadState(other);
  EXPECT_EQ(v.code(), StatusCode::kNotSupported);
  EXPECT_NE(v.message().find("version 7; this build reads 1"),
            std::string::npos);
  Status c = s.LoadState(good.substr(0, good.size() / 2));
  EXPECT_EQ(c.code(), StatusCode::kCorruption);
  EXPECT_NE(c.message().find("lr-schedule state: missing"), std::string::npos)
      << c.message();
  EXPECT_EQ(s.step(), 1);
  EXPECT_EQ(t.Lrs()[1], Cosine(10).At(1));
}

TEST(LrSchedulerTest, NullOrEmptyOptimizerIsRefused) {
  EXPECT_EQ(LrScheduler::Create(nullptr, Cosine(3)).status().code(),
            StatusCode::kInvalidArgument);
  torch::optim::SGD empty(std::vector<torch::optim::OptimizerParamGroup>{},
                          torch::optim::SGDOptions(1.0));
  Status s = LrScheduler::Create(&empty, Cosine(3)).status();
  EXPECT_NE(s.message().find("no parameter groups"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace lockstep
