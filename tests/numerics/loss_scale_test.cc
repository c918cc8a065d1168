#include "lockstep/numerics/loss_scale.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

namespace lockstep {
namespace {

constexpr double k2p16 = 65536.0;
constexpr double k2p24 = 16777216.0;
constexpr double k2p32 = 4294967296.0;

LossScaleState Make(std::string_view preset) {
  StatusOr<LossScaleOptions> o = LossScaleState::Preset(preset);
  EXPECT_TRUE(o.ok()) << o.status().ToString();
  return LossScaleState(*o);
}

// Runs `n` good steps; every one must be applied. Returns the scale.
double Good(LossScaleState& s, int n) {
  for (int i = 0; i < n; ++i) {
    EXPECT_TRUE(s.Update(false)) << "good step " << i << " skipped";
  }
  return s.scale();
}

// One overflow: must be skipped. Returns the scale after it.
double Inf(LossScaleState& s) {
  EXPECT_FALSE(s.Update(true)) << "overflow step applied";
  return s.scale();
}

// --- PyTorch: tracker += 1, grow when tracker == 2000 (the 2000th step).

TEST(LossScaleTest, PyTorchGrowsExactlyAtStep2000) {
  LossScaleState s = Make("pytorch");
  EXPECT_EQ(s.scale(), k2p16);
  EXPECT_EQ(Good(s, 1999), k2p16);  // tracker 1999 != 2000
  EXPECT_EQ(s.growth_tracker(), 1999);
  EXPECT_EQ(Good(s, 1), 2 * k2p16);  // tracker 2000: grow, reset
  EXPECT_EQ(s.growth_tracker(), 0);
  EXPECT_EQ(s.last_event(), LossScaleEvent::kGrew);
}

TEST(LossScaleTest, PyTorchOverflowBacksOffAndResetsTracker) {
  LossScaleState s = Make("pytorch");
  Good(s, 1000);
  EXPECT_EQ(Inf(s), k2p16 / 2);  // s *= 0.5, tracker = 0, skipped
  EXPECT_EQ(s.growth_tracker(), 0);
  EXPECT_EQ(Good(s, 1999), k2p16 / 2);
  EXPECT_EQ(Good(s, 1), k2p16);  // the 2000th good step after the overflow
  EXPECT_EQ(Inf(s), k2p16 / 2);  // no hysteresis: every overflow backs off
  EXPECT_EQ(Inf(s), k2p16 / 4);
  EXPECT_EQ(s.total_skipped(), 3);
  EXPECT_EQ(s.consecutive_overflows(), 2);
}

TEST(LossScaleTest, PyTorchKeepsScaleWhenGrowthWouldOverflowFloat32) {
  LossScaleOptions o = *LossScaleState::Preset("pytorch");
  o.init_scale = std::ldexp(1.0, 127);  // 2^128 is inf in float32
  o.growth_interval = 1;
  LossScaleState s(o);
  EXPECT_EQ(Good(s, 1), std::ldexp(1.0, 127));
  EXPECT_EQ(s.last_event(), LossScaleEvent::kHeldAtMax);
  EXPECT_EQ(s.times_held_at_max(), 1);
  EXPECT_EQ(s.growth_tracker(), 0);  // PyTorch resets it anyway
}

TEST(LossScaleTest, PyTorchBackoffHeldAtSmallestFloat32) {
  LossScaleOptions o = *LossScaleState::Preset("pytorch");
  o.init_scale = kMinFloat32;
  LossScaleState s(o);
  EXPECT_EQ(Inf(s), kMinFloat32);  // 2^-150 rounds to 0 in float32: held
  EXPECT_EQ(s.last_event(), LossScaleEvent::kHeldAtMin);
  EXPECT_EQ(s.times_held_at_min(), 1);
}

// --- DeepSpeed: cur_iter from 0, last_overflow_iter = -1, growth when
// stable = cur_iter - last_overflow_iter - 1 > 0 and stable % 1000 == 0.

TEST(LossScaleTest, DeepSpeedGrowsOnThe1001stGoodStep) {
  LossScaleState s = Make("deepspeed");
  // Steps cur_iter 0..999 have stable 0..999: no growth.
  EXPECT_EQ(Good(s, 1000), k2p16);
  // cur_iter 1000: stable 1000 % 1000 == 0 -> grow.
  EXPECT_EQ(Good(s, 1), 2 * k2p16);
  // Then every 1000 good steps (stable 2000 at cur_iter 2000).
  EXPECT_EQ(Good(s, 999), 2 * k2p16);
  EXPECT_EQ(Good(s, 1), 4 * k2p16);
}

TEST(LossScaleTest, DeepSpeedHysteresisTwoNeedsTwoOverflows) {
  LossScaleState s = Make("deepspeed");
  EXPECT_EQ(Inf(s), k2p16);  // cur_hysteresis 2 -> 1, no backoff
  EXPECT_EQ(s.hysteresis_left(), 1);
  EXPECT_EQ(s.last_event(), LossScaleEvent::kHysteresis);
  EXPECT_EQ(Inf(s), k2p16 / 2);       // cur_hysteresis == 1: back off
  EXPECT_EQ(s.hysteresis_left(), 1);  // DeepSpeed does not decrement here
  EXPECT_EQ(Inf(s), k2p16 / 4);
  // A good step does not refill (consecutive_hysteresis false) ...
  EXPECT_EQ(Good(s, 1), k2p16 / 4);
  EXPECT_EQ(Inf(s), k2p16 / 8);
  // ... growth does: last overflow at cur_iter 4; stable 1000 at 1005.
  EXPECT_EQ(Good(s, 1000), k2p16 / 8);
  EXPECT_EQ(Good(s, 1), k2p16 / 4);
  EXPECT_EQ(s.hysteresis_left(), 2);
  EXPECT_EQ(Inf(s), k2p16 / 4);  // hysteresis absorbs it again
}

TEST(LossScaleTest, DeepSpeedConsecutiveHysteresisRefillsOnGoodStep) {
  LossScaleOptions o = *LossScaleState::Preset("deepspeed");
  o.consecutive_hysteresis = true;
  LossScaleState s(o);
  EXPECT_EQ(Inf(s), k2p16);  // 2 -> 1
  EXPECT_EQ(Good(s, 1), k2p16);
  EXPECT_EQ(s.hysteresis_left(), 2);  // refilled
  EXPECT_EQ(Inf(s), k2p16);           // absorbed again
  EXPECT_EQ(Inf(s), k2p16 / 2);
}

TEST(LossScaleTest, DeepSpeedFailsOnOverflowAtMinScale) {
  LossScaleOptions o = *LossScaleState::Preset("deepspeed");
  o.init_scale = 2;
  LossScaleState s(o);
  EXPECT_EQ(Inf(s), 2.0);  // hysteresis
  EXPECT_EQ(Inf(s), 1.0);  // 2 / 2 = min_scale, fine
  EXPECT_TRUE(s.status().ok());
  EXPECT_EQ(Inf(s), 1.0);  // at min: DeepSpeed raises
  EXPECT_FALSE(s.status().ok());
  EXPECT_EQ(s.last_event(), LossScaleEvent::kFailed);
  EXPECT_NE(s.status().message().find("fail_on_overflow_at_min_scale"),
            std::string::npos)
      << s.status().message();

  o.fail_on_overflow_at_min_scale = false;
  LossScaleState held(o);
  Inf(held);
  Inf(held);
  EXPECT_EQ(Inf(held), 1.0);  // max(0.5, 1)
  EXPECT_EQ(held.last_event(), LossScaleEvent::kHeldAtMin);
  EXPECT_TRUE(held.status().ok());
}

// --- Megatron: hysteresis_tracker -= 1 per overflow, back off when <= 0.

TEST(LossScaleTest, MegatronTenSkippedIterationsGive8388608) {
  LossScaleState s = Make("megatron");
  EXPECT_EQ(s.scale(), k2p32);
  // Overflow 1: tracker 2 -> 1, no backoff. Overflows 2..10: tracker
  // 0, -1, ..., -8, each halves: 2^32 / 2^9 = 2^23.
  for (int i = 0; i < 10; ++i) Inf(s);
  EXPECT_EQ(s.scale(), 8388608.0);
  EXPECT_EQ(s.total_skipped(), 10);
  EXPECT_EQ(s.hysteresis_left(), -8);
}

TEST(LossScaleTest, MegatronGrowsAt1000AndOnlyGrowthRefillsHysteresis) {
  LossScaleState s = Make("megatron");
  EXPECT_EQ(Inf(s), k2p32);  // hysteresis 2 -> 1
  EXPECT_EQ(Good(s, 1), k2p32);
  EXPECT_EQ(s.hysteresis_left(), 1);  // not refilled by a good step
  EXPECT_EQ(Inf(s), k2p32 / 2);       // 1 -> 0: back off
  EXPECT_EQ(Good(s, 999), k2p32 / 2);
  EXPECT_EQ(Good(s, 1), k2p32);  // tracker == 1000
  EXPECT_EQ(s.hysteresis_left(), 2);
  EXPECT_EQ(s.growth_tracker(), 0);
}

// --- MindSpore DynamicLossScaleManager: cur_iter from 1,
// last_overflow_iter = 0; grow when (cur_iter - last) % 2000 == 0.

TEST(LossScaleTest, MindSporeWindowGrowth) {
  LossScaleState s = Make("mindspore");
  EXPECT_EQ(s.scale(), k2p24);
  EXPECT_EQ(Good(s, 1999), k2p24);      // cur_iter 1..1999
  EXPECT_EQ(Good(s, 1), 2 * k2p24);     // cur_iter 2000
  EXPECT_EQ(Inf(s), k2p24);             // cur_iter 2001 = last_overflow
  EXPECT_EQ(Good(s, 1999), k2p24);      // cur_iter 2002..4000
  EXPECT_EQ(Good(s, 1), 2 * k2p24);     // cur_iter 4001: 2000 % 2000
  EXPECT_EQ(Good(s, 2000), 4 * k2p24);  // modulo: again 2000 later
}

TEST(LossScaleTest, MindSporeNeverBelowOneAndFailsAfter1001Overflows) {
  LossScaleState s = Make("mindspore");
  for (int i = 0; i < 24; ++i) Inf(s);  // 2^24 -> 1
  EXPECT_EQ(s.scale(), 1.0);
  EXPECT_EQ(Inf(s), 1.0);  // max(0.5, 1)
  EXPECT_EQ(s.last_event(), LossScaleEvent::kHeldAtMin);
  for (int i = 25; i < 1000; ++i) Inf(s);
  EXPECT_TRUE(s.status().ok());  // bad_step 1000 is not > 1000
  Inf(s);
  EXPECT_FALSE(s.status().ok());
  EXPECT_EQ(s.consecutive_overflows(), 1001);
  EXPECT_NE(s.status().message().find("1001 consecutive overflows"),
            std::string::npos)
      << s.status().message();
}

TEST(LossScaleTest, FailAfterResetsOnGoodStep) {
  LossScaleOptions o = *LossScaleState::Preset("pytorch");
  o.fail_after_consecutive_overflows = 3;
  LossScaleState s(o);
  Inf(s);
  Inf(s);
  Good(s, 1);
  Inf(s);
  Inf(s);
  EXPECT_TRUE(s.status().ok());
  Inf(s);
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
}

// --- MindSpore FixedLossScaleManager.

TEST(LossScaleTest, FixedManager) {
  LossScaleState s = Make("mindspore-fixed");
  EXPECT_EQ(s.scale(), 128.0);
  EXPECT_FALSE(s.Update(true));  // drop_overflow_update
  EXPECT_TRUE(s.Update(false));
  for (int i = 0; i < 5000; ++i) s.Update(i % 3 == 0);
  EXPECT_EQ(s.scale(), 128.0);

  LossScaleOptions o = *LossScaleState::Preset("mindspore-fixed");
  o.drop_overflow_update = false;
  LossScaleState keep(o);
  EXPECT_TRUE(keep.Update(true));
  EXPECT_EQ(keep.total_skipped(), 0);
  EXPECT_EQ(keep.scale(), 128.0);
}

TEST(LossScaleTest, MaxScaleHoldsGrowth) {
  LossScaleOptions o = *LossScaleState::Preset("megatron");
  o.max_scale = k2p32;
  LossScaleState s(o);
  EXPECT_EQ(Good(s, 1000), k2p32);
  EXPECT_EQ(s.last_event(), LossScaleEvent::kHeldAtMax);
  EXPECT_EQ(s.times_held_at_max(), 1);
}

// --- Options.

TEST(LossScaleTest, PresetsAreValid) {
  for (std::string_view name : LossScaleState::PresetNames()) {
    StatusOr<LossScaleOptions> o = LossScaleState::Preset(name);
    ASSERT_TRUE(o.ok()) << name;
    EXPECT_TRUE(LossScaleState::Validate(*o).ok()) << name;
  }
}

TEST(LossScaleTest, UnknownPresetListsKnownOnes) {
  StatusOr<LossScaleOptions> o = LossScaleState::Preset("apex");
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(o.status().message(),
            "loss scale preset 'apex': unknown. Note: known presets are "
            "pytorch, mindspore, mindspore-fixed, deepspeed, megatron");
}

std::string ErrorOf(void (*edit)(LossScaleOptions&)) {
  LossScaleOptions o;
  edit(o);
  return LossScaleState::Validate(o).message();
}

TEST(LossScaleTest, ValidateNamesOptionAndValue) {
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) { o.backoff_factor = 1.5; }),
            "backoff_factor 1.5: must be in (0, 1)");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) { o.backoff_factor = 0; }),
            "backoff_factor 0.0: must be in (0, 1)");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) { o.growth_factor = 1; }),
            "growth_factor 1.0: must be finite and > 1");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) { o.init_scale = NAN; }),
            "init_scale nan: must be finite and > 0");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) { o.min_scale = 0; }),
            "min_scale 0.0: must be finite and > 0");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) { o.max_scale = INFINITY; }),
            "max_scale inf: must be finite and > 0");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) {
              o.min_scale = 4;
              o.max_scale = 2;
            }),
            "min_scale 4.0: must be <= max_scale 2.0");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) {
              o.min_scale = 1;
              o.init_scale = 0.5;
            }),
            "init_scale 0.5: must be in [min_scale, max_scale] = [1.0, "
            "3.4028234663852886e+38]");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) { o.growth_interval = 0; }),
            "growth_interval 0: must be >= 1");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) {
              o.rule = LossScaleRule::kMegatron;
              o.hysteresis = 0;
            }),
            "hysteresis 0: must be >= 1");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) { o.hysteresis = 2; }),
            "hysteresis 2: the pytorch rule has no hysteresis. Note: use 1, "
            "or the deepspeed or megatron rule");
  EXPECT_EQ(ErrorOf([](LossScaleOptions& o) {
              o.fail_after_consecutive_overflows = -1;
            }),
            "fail_after_consecutive_overflows -1: must be >= 0 (0 = never)");
}

// --- Property: random overflow sequences keep the scale in bounds.

TEST(LossScaleTest, RandomSequencesStayInBounds) {
  std::mt19937 rng(12345);
  std::vector<LossScaleOptions> configs;
  for (std::string_view name : LossScaleState::PresetNames()) {
    configs.push_back(*LossScaleState::Preset(name));
  }
  for (LossScaleRule rule :
       {LossScaleRule::kPyTorch, LossScaleRule::kDeepSpeed,
        LossScaleRule::kMegatron, LossScaleRule::kMindSpore}) {
    LossScaleOptions o;
    o.rule = rule;
    o.min_scale = 0.75;
    o.max_scale = 1000;
    o.init_scale = 3;
    o.growth_factor = 3;
    o.backoff_factor = 0.3;
    o.growth_interval = 3;
    o.hysteresis =
        rule == LossScaleRule::kDeepSpeed || rule == LossScaleRule::kMegatron
            ? 2
            : 1;
    configs.push_back(o);
  }
  for (size_t c = 0; c < configs.size(); ++c) {
    for (double p_inf : {0.01, 0.3, 0.9}) {
      LossScaleState s(configs[c]);
      std::bernoulli_distribution inf(p_inf);
      for (int i = 0; i < 20000; ++i) {
        s.Update(inf(rng));
        double v = s.scale();
        ASSERT_TRUE(std::isfinite(v) && v >= configs[c].min_scale &&
                    v <= configs[c].max_scale)
            << "config " << c << " p_inf " << p_inf << " step " << i
            << " scale " << v;
      }
    }
  }
}

}  // namespace
}  // namespace lockstep
