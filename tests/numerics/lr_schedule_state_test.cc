// LrScheduleState: stepping, and the checkpoint text round trip with its
// version and corruption errors.
#include "lockstep/numerics/lr_schedule_state.h"

#include <gtest/gtest.h>

#include <string>

#include "numerics/lr_schedule_random.h"

namespace lockstep {
namespace {

LrScheduleState CosineState(int64_t step) {
  ScheduleConfig c;
  c.kind = ScheduleKind::kCosineDecay;
  c.max_lr = 0.1;
  c.min_lr = 0.001;
  c.decay_steps = 100;
  return LrScheduleState(*LrSchedule::Create(c), step);
}

// Replaces the line starting with `key ` (or appends when absent).
std::string WithLine(std::string text, const std::string& key,
                     const std::string& line) {
  size_t p = text.find("\n" + key + " ");
  if (p == std::string::npos) return text + line + "\n";
  size_t end = text.find('\n', p + 1);
  return text.replace(p + 1, end - p - 1, line);
}

TEST(LrScheduleStateTest, AdvanceStepsThroughTheSchedule) {
  LrScheduleState s = CosineState(0);
  EXPECT_EQ(s.lr(), 0.1);
  for (int i = 0; i < 100; ++i) s.Advance();
  EXPECT_EQ(s.step(), 100);
  EXPECT_EQ(s.lr(), 0.001);
}

TEST(LrScheduleStateTest, RoundTripsEveryKindExactly) {
  testing::ScheduleSampler sampler(9);
  for (std::string_view name : ScheduleKindNames()) {
    for (int i = 0; i < 20; ++i) {
      ScheduleConfig c = sampler.Config(*ScheduleKindFromName(name));
      LrScheduleState s(*LrSchedule::Create(c), sampler.Steps());
      std::string text = s.SaveState();
      StatusOr<LrScheduleState> back = LrScheduleState::LoadState(text);
      ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
      EXPECT_EQ(back->SaveState(), text);
      EXPECT_EQ(back->step(), s.step());
      for (int64_t step : sampler.SampleSteps(c, 5)) {
        ASSERT_EQ(back->schedule().At(step), s.schedule().At(step)) << name;
      }
    }
  }
}

TEST(LrScheduleStateTest, OtherVersionIsNotSupported) {
  std::string text = CosineState(3).SaveState();
  text.replace(0, text.find('\n'), "lockstep-lr-schedule 2");
  Status s = LrScheduleState::LoadState(text).status();
  EXPECT_EQ(s.code(), StatusCode::kNotSupported);
  EXPECT_NE(s.message().find("version 2; this build reads 1"),
            std::string::npos)
      << s.message();
}

TEST(LrScheduleStateTest, CorruptionNamesTheKeyOrLine) {
  std::string good = CosineState(3).SaveState();
  struct Case {
    std::string text;
    const char* want;
  };
  const Case kCases[] = {
      {"", "does not start with 'lockstep-lr-schedule <version>'"},
      {"lockstep-loss-scale 1\n", "does not start with"},
      {WithLine(good, "step", "step x"), "step 'x' is not a valid value"},
      {WithLine(good, "step", "step -4"), "step -4 is negative"},
      {WithLine(good, "max_lr", "max_lr 0x1p+90000"), "max_lr"},
      {WithLine(good, "min_lr", "min_lr 0x1p+0"),
       "min_lr 1 is not below max_lr 0.1"},
      {WithLine(good, "kind", "kind cosine"), "kind: schedule 'cosine'"},
      {WithLine(good, "anneal", "anneal cubic"), "anneal: shape 'cubic'"},
      {WithLine(good, "period", "period"), "expected 'key value'"},
      {WithLine(good, "staircase", "staircase 2"), "staircase '2'"},
      {WithLine(good, "boundaries", "boundaries 1,,2"), "boundaries '1,,2'"},
      {good + "step 5\n", "key 'step' appears twice"},
      {good + "colour red\n", "unknown key 'colour'"},
      {good.substr(0, good.find("\nstep ")), "missing 'step'"},
      {good.substr(0, good.find("\ntotal_steps")), "missing 'total_steps'"},
  };
  for (const Case& c : kCases) {
    Status s = LrScheduleState::LoadState(c.text).status();
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << c.want << s.message();
    EXPECT_NE(s.message().find(c.want), std::string::npos)
        << "want '" << c.want << "' in: " << s.message();
    EXPECT_NE(s.message().find("lr-schedule state"), std::string::npos);
  }
}

}  // namespace
}  // namespace lockstep
