#include <gtest/gtest.h>

#include <random>
#include <string>

#include "lockstep/numerics/loss_scale.h"

namespace lockstep {
namespace {

LossScaleState Fresh(const char* preset) {
  return LossScaleState(*LossScaleState::Preset(preset));
}

// A restored state continues exactly like the original.
TEST(LossScaleIoTest, RoundTripContinuesIdentically) {
  for (const char* p :
       {"pytorch", "deepspeed", "megatron", "mindspore", "mindspore-fixed"}) {
    LossScaleState a = Fresh(p);
    std::mt19937 rng(5);
    for (int i = 0; i < 3000; ++i) a.Update(rng() % 97 == 0);
    StatusOr<LossScaleState> b = LossScaleState::LoadState(a.SaveState());
    ASSERT_TRUE(b.ok()) << p << ": " << b.status().ToString();
    EXPECT_EQ(b->SaveState(), a.SaveState()) << p;
    for (int i = 0; i < 5000; ++i) {
      bool inf = rng() % 89 == 0;
      ASSERT_EQ(a.Update(inf), b->Update(inf)) << p << " step " << i;
      ASSERT_EQ(a.scale(), b->scale()) << p << " step " << i;
    }
  }
}

std::string Replace(std::string s, const std::string& from,
                    const std::string& to) {
  size_t p = s.find(from);
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

TEST(LossScaleIoTest, OtherVersionIsNotSupported) {
  std::string text = Replace(Fresh("pytorch").SaveState(),
                             "lockstep-loss-scale 1", "lockstep-loss-scale 2");
  StatusOr<LossScaleState> s = LossScaleState::LoadState(text);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(s.status().message().find("version 2; this build reads 1"),
            std::string::npos);
}

TEST(LossScaleIoTest, CorruptStatesAreRejectedWithReasons) {
  const std::string good = Fresh("megatron").SaveState();
  struct Case {
    std::string text;
    const char* expect;
  } cases[] = {
      {"", "not a lockstep loss-scale state"},
      {"hello\n", "not a lockstep loss-scale state"},
      {Replace(good, "rule megatron", "rule caffe"), "unknown rule 'caffe'"},
      {Replace(good, "backoff_factor 0x1p-1", "backoff_factor 0x1.8p+0"),
       "backoff_factor"},
      {Replace(good, "growth_interval 1000", "growth_interval ten"),
       "growth_interval 'ten'"},
      {Replace(good, "dynamic 1", "dynamic 2"), "dynamic '2'"},
      {Replace(good, "\nscale 0x1p+32\n", "\nscale inf\n"),
       "outside [min_scale, max_scale]"},
      {Replace(good, "iter 0", "iter -4"), "negative"},
      {good.substr(0, good.find("held_at_max")), "missing 'held_at_max'"},
      {good + "iter 3\n", "'iter' appears twice"},
      {Replace(good, "hysteresis 2", "hysteresis"), "expected 'key value'"},
  };
  for (const Case& c : cases) {
    StatusOr<LossScaleState> s = LossScaleState::LoadState(c.text);
    ASSERT_FALSE(s.ok()) << c.expect;
    EXPECT_EQ(s.status().code(), StatusCode::kCorruption)
        << s.status().ToString();
    EXPECT_NE(s.status().message().find(c.expect), std::string::npos)
        << "want '" << c.expect << "' in: " << s.status().message();
  }
}

TEST(LossScaleIoTest, TruncationNeverCrashes) {
  const std::string good = Fresh("deepspeed").SaveState();
  for (size_t n = 0; n < good.size(); ++n) {
    StatusOr<LossScaleState> s = LossScaleState::LoadState(good.substr(0, n));
    if (s.ok()) EXPECT_EQ(s->SaveState().substr(0, n), good.substr(0, n));
  }
}

}  // namespace
}  // namespace lockstep
