// LrSchedule properties over random configurations of every kind, with
// steps up to 2^40: every value in [floor, peak], monotone where the formula
// is, exact values where a phase starts or ends; and the validation
// messages for bad configurations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "lockstep/numerics/lr_schedule.h"
#include "numerics/lr_schedule_random.h"

namespace lockstep {
namespace {

using K = ScheduleKind;
using testing::ScheduleSampler;

constexpr int kConfigsPerKind = 300;
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

std::string Describe(const LrSchedule& s) {
  const ScheduleConfig& c = s.config();
  return std::string(ScheduleKindName(c.kind)) + " max " +
         std::to_string(c.max_lr) + " min " + std::to_string(c.min_lr) + " W " +
         std::to_string(c.warmup_steps) + " D " +
         std::to_string(c.decay_steps) + " T " + std::to_string(c.total_steps);
}

// The schedule is non-decreasing on [0, rise_end] and non-increasing on
// [fall_start, inf) (kNone: not checked). Restarts are checked per cycle.
struct Shape {
  int64_t rise_end = 0;
  int64_t fall_start = kNone;
};

Shape MonotoneShape(const ScheduleConfig& c) {
  switch (c.kind) {
    case K::kCosineDecay:
    case K::kExponential:
    case K::kNaturalExp:
    case K::kInverseTime:
      return {0, 0};
    case K::kCosineWarmup:
      return {c.warmup_steps, c.cycles == 0.5 ? c.warmup_steps : kNone};
    case K::kOneCycle: {
      double p = c.pct_start * static_cast<double>(c.total_steps) - 1;
      return {static_cast<int64_t>(std::floor(p)),
              static_cast<int64_t>(std::ceil(p))};
    }
    case K::kPiecewise:
    case K::kCosineRestarts:
      return {0, kNone};
    default:  // warmup, then decay (or constant)
      return {c.warmup_steps, c.warmup_steps};
  }
}

void CheckMonotone(const LrSchedule& s, const std::vector<int64_t>& steps) {
  Shape shape = MonotoneShape(s.config());
  const ScheduleConfig& c = s.config();
  for (size_t i = 1; i < steps.size(); ++i) {
    int64_t a = steps[i - 1], b = steps[i];
    double va = s.At(a), vb = s.At(b);
    if (b <= shape.rise_end) {
      ASSERT_LE(va, vb) << Describe(s) << " rises from " << a << " to " << b;
    }
    if (a >= shape.fall_start) {
      ASSERT_GE(va, vb) << Describe(s) << " falls from " << a << " to " << b;
    }
    if (c.kind == K::kCosineRestarts &&
        FindRestart(a, c.period, c.period_mult).cycle ==
            FindRestart(b, c.period, c.period_mult).cycle) {
      ASSERT_GE(va, vb) << Describe(s) << " in one cycle, " << a << " to " << b;
    }
  }
}

// Steps where the value is exactly the floor or the peak.
std::vector<std::pair<int64_t, double>> ExactPoints(const LrSchedule& s) {
  const ScheduleConfig& c = s.config();
  double lo = s.floor(), hi = s.peak();
  switch (c.kind) {
    case K::kCosineDecay:  // and the midpoint, 0.5 * (1 + cos(pi / 2))
      return {{0, hi},
              {c.decay_steps, lo},
              {c.decay_steps + 12345, lo},
              {c.decay_steps / 2, c.decay_steps % 2 ? s.At(c.decay_steps / 2)
                                                    : std::lerp(lo, hi, 0.5)}};
    case K::kCosineRestarts: {
      RestartPosition r =
          FindRestart(int64_t{1} << 40, c.period, c.period_mult);
      return {{0, hi}, {c.period, hi}, {r.start, hi}};
    }
    case K::kLinearWarmup:
    case K::kPolynomial:
      return {{0, c.warmup_steps ? lo : hi},
              {c.warmup_steps, hi},
              {c.total_steps, lo},
              {c.total_steps + 1, lo}};
    case K::kCosineWarmup:
      if (c.cycles != 0.5) return {{c.warmup_steps, hi}};
      return {{c.warmup_steps, hi}, {c.total_steps, lo}};
    case K::kExponential:
    case K::kNaturalExp:
    case K::kInverseTime:
      return {{0, hi}, {c.staircase ? c.decay_steps - 1 : 0, hi}};
    case K::kOneCycle:
      return {{0, c.max_lr / c.div_factor},
              {c.total_steps - 1, lo},
              {c.total_steps + 5, lo}};
    case K::kWsd: {
      int64_t end = c.warmup_steps + c.stable_steps + c.decay_steps;
      return {{0, c.warmup_steps ? lo : hi},
              {c.warmup_steps, hi},
              {end, lo},
              {end - c.decay_steps, hi}};
    }
    case K::kInverseSqrt:
    case K::kConstantWarmup:
      return {{0, c.warmup_steps ? lo : hi}, {c.warmup_steps, hi}};
    case K::kPiecewise:
      return {{0, c.values[0]}, {s.end_step(), c.values.back()}};
  }
  return {};
}

class LrSchedulePropertyTest : public ::testing::TestWithParam<K> {};

TEST_P(LrSchedulePropertyTest, RangeMonotonicityAndExactEndpoints) {
  ScheduleSampler sampler(1000 + static_cast<int>(GetParam()));
  for (int i = 0; i < kConfigsPerKind; ++i) {
    LrSchedule s = *LrSchedule::Create(sampler.Config(GetParam()));
    std::vector<int64_t> steps = sampler.SampleSteps(s.config(), 40);
    for (int64_t step : steps) {
      double v = s.At(step);
      ASSERT_TRUE(v >= s.floor() && v <= s.peak())
          << Describe(s) << " step " << step << " gives " << v << " outside ["
          << s.floor() << ", " << s.peak() << "]";
    }
    CheckMonotone(s, steps);
    for (auto [step, want] : ExactPoints(s)) {
      ASSERT_EQ(s.At(step), want) << Describe(s) << " step " << step;
    }
    if (s.end_step() != LrSchedule::kNoEnd) {
      ASSERT_EQ(s.At(s.end_step()), s.At(s.end_step() + (int64_t{1} << 40)))
          << Describe(s) << " changes past its end";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, LrSchedulePropertyTest,
                         ::testing::Values(K::kCosineDecay, K::kCosineRestarts,
                                           K::kLinearWarmup, K::kCosineWarmup,
                                           K::kPolynomial, K::kExponential,
                                           K::kNaturalExp, K::kInverseTime,
                                           K::kPiecewise, K::kOneCycle, K::kWsd,
                                           K::kInverseSqrt, K::kConstantWarmup),
                         [](const ::testing::TestParamInfo<K>& info) {
                           std::string n(ScheduleKindName(info.param));
                           std::erase(n, '-');
                           return n;
                         });

TEST(LrScheduleValidationTest, BadConfigsNameTheFieldAndWhy) {
  auto bad = [](K kind, auto edit, const char* want) {
    ScheduleConfig c;
    c.kind = kind;
    c.max_lr = 0.1;
    c.decay_steps = c.total_steps = c.period = 100;
    c.decay_rate = 0.5;
    edit(c);
    Status s = ValidateSchedule(c);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << want;
    EXPECT_NE(s.message().find(want), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(ScheduleKindName(kind)), std::string::npos);
  };
  double nan = std::numeric_limits<double>::quiet_NaN();
  bad(
      K::kCosineDecay, [](auto& c) { c.min_lr = 0.1; },
      "min_lr 0.1 is not below max_lr 0.1");
  bad(
      K::kCosineDecay, [&](auto& c) { c.max_lr = nan; },
      "max_lr nan must be finite");
  bad(
      K::kCosineDecay, [](auto& c) { c.min_lr = -1; }, "min_lr -1");
  bad(
      K::kCosineDecay, [](auto& c) { c.decay_steps = 0; },
      "decay_steps 0 must be >= 1");
  bad(
      K::kCosineRestarts, [](auto& c) { c.period_mult = 0; }, "period_mult 0");
  bad(
      K::kLinearWarmup, [](auto& c) { c.warmup_steps = -3; },
      "warmup_steps -3");
  bad(
      K::kLinearWarmup, [](auto& c) { c.warmup_steps = 100; },
      "total_steps 100 must be >= 101");
  bad(
      K::kExponential, [](auto& c) { c.decay_rate = 1.5; }, "decay_rate 1.5");
  bad(
      K::kPolynomial, [](auto& c) { c.power = 0; }, "power 0");
  bad(
      K::kOneCycle, [](auto& c) { c.pct_start = 0.01; },
      "phase of zero or negative length");
  bad(
      K::kOneCycle, [](auto& c) { c.div_factor = 0.5; }, "div_factor 0.5");
  bad(
      K::kPiecewise,
      [](auto& c) {
        c.values = {1, 2};
      },
      "one value more than boundaries");
  bad(
      K::kPiecewise,
      [](auto& c) {
        c.boundaries = {5, 5}, c.values = {1, 2, 3};
      },
      "boundary 5 must be >= 6");
  bad(
      K::kWsd, [](auto& c) { c.decay_steps = 0; }, "decay_steps 0");
  bad(
      K::kCosineDecay,
      [](auto& c) { c.decay_steps = std::numeric_limits<int64_t>::max(); },
      "<= 2^62");
  EXPECT_FALSE(ScheduleKindFromName("cosine").ok());
  EXPECT_NE(
      ScheduleKindFromName("cosine").status().message().find("cosine-decay"),
      std::string::npos);
}

}  // namespace
}  // namespace lockstep
