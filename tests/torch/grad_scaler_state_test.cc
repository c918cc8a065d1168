// GradScaler::StateDict / LoadStateDict: round trips, versions, corruption.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <limits>
#include <random>
#include <string>

#include "lockstep/torch/grad_scaler.h"

namespace lockstep {
namespace {

class GradScalerStateTest : public ::testing::Test {
 protected:
  void SetUp() override { at::set_num_threads(2); }
  at::Tensor p_ = at::zeros({3}).requires_grad_(true);
  torch::optim::SGD opt_{{p_}, torch::optim::SGDOptions(0.1)};

  // One iteration whose gradient is finite or not.
  void Iterate(GradScaler* scaler, bool inf) {
    p_.mutable_grad() =
        at::full({3}, inf ? std::numeric_limits<float>::infinity() : 1.0f);
    ASSERT_TRUE(scaler->Step(opt_).ok());
    ASSERT_TRUE(scaler->Update().ok());
  }
};

GradScaler FromSpec(const char* spec, GradScalerOptions o = {}) {
  StatusOr<GradScaler> s = GradScaler::FromSpec(spec, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(*s);
}

std::string Replace(std::string s, const std::string& from,
                    const std::string& to) {
  size_t p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

TEST_F(GradScalerStateTest, RestoredScalerContinuesIdentically) {
  for (const char* spec : {"dynamic", "dynamic:deepspeed", "dynamic:megatron",
                           "dynamic:mindspore", "fixed:1024"}) {
    GradScaler a = FromSpec(spec);
    std::mt19937 rng(11);
    for (int i = 0; i < 3000; ++i) Iterate(&a, rng() % 500 == 0);
    GradScaler b = FromSpec("dynamic");  // other options: all restored
    Status s = b.LoadStateDict(a.StateDict());
    ASSERT_TRUE(s.ok()) << spec << ": " << s.ToString();
    EXPECT_EQ(b.StateDict(), a.StateDict());
    for (int i = 0; i < 2000; ++i) {
      bool inf = rng() % 400 == 0;
      Iterate(&a, inf);
      Iterate(&b, inf);
      ASSERT_EQ(a.scale(), b.scale()) << spec << " step " << i;
    }
  }
}

TEST_F(GradScalerStateTest, OtherVersionIsNotSupported) {
  std::string text =
      Replace(FromSpec("dynamic").StateDict(), "lockstep-grad-scaler 1",
              "lockstep-grad-scaler 7");
  GradScaler s = FromSpec("dynamic");
  Status st = s.LoadStateDict(text);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("version 7; this build reads 1"),
            std::string::npos)
      << st.message();
}

TEST_F(GradScalerStateTest, CorruptStatesAreRejectedNamingTheProblem) {
  std::string good = FromSpec("dynamic").StateDict();
  struct Case {
    std::string text;
    const char* problem;
  };
  std::vector<Case> cases = {
      {"", "line 1: expected 'lockstep-grad-scaler 1'"},
      {"garbage\n", "line 1: expected 'lockstep-grad-scaler 1'"},
      {"lockstep-grad-scaler x1\n", "line 1: bad version 'x1'"},
      {good.substr(0, good.find("mode")), "line 3: expected 'mode VALUE'"},
      {Replace(good, "check value", "chek value"),
       "line 2: expected 'check VALUE'"},
      {Replace(good, "lockstep-loss-scale 1", "lockstep-loss-scal 1"),
       "GradScaler state_dict: loss-scale state"},
      {good.substr(0, good.size() / 2), "GradScaler state_dict"},
      {Replace(good, "scale 0x", "scale zz0x"), "GradScaler state_dict"},
  };
  for (const Case& c : cases) {
    GradScaler s = FromSpec("dynamic");
    Status st = s.LoadStateDict(c.text);
    ASSERT_FALSE(st.ok()) << c.text;
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
    EXPECT_NE(st.message().find(c.problem), std::string::npos)
        << st.message() << "\nwanted: " << c.problem;
    EXPECT_EQ(s.scale(), 65536.0) << "a failed load changes nothing";
  }
}

TEST_F(GradScalerStateTest, OtherCheckOrModeIsRejected) {
  GradScalerOptions joint;
  joint.mode = StepMode::kJoint;
  std::string text = FromSpec("dynamic", joint).StateDict();
  GradScaler s = FromSpec("dynamic");
  Status st = s.LoadStateDict(text);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("saved with check 'value', mode 'joint'"),
            std::string::npos)
      << st.message();
}

TEST_F(GradScalerStateTest, LoadDuringAnIterationIsRejected) {
  GradScaler s = FromSpec("dynamic");
  std::string text = s.StateDict();
  p_.mutable_grad() = at::ones({3});
  ASSERT_TRUE(s.Unscale(opt_).ok());
  Status st = s.LoadStateDict(text);
  EXPECT_NE(st.message().find("loaded during an iteration"), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace lockstep
