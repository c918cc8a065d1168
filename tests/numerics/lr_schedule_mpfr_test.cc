// LrSchedule and CosPi/SinPi against references evaluated in 200-bit MPFR,
// written from each framework's formula as its source states it (not from
// lockstep's restructured form): min + (max - min) / 2 * (1 + cos(pi s/D)),
// HF's lambdas, PyTorch's one-cycle phases, and so on.
//
// Tolerance, for a reference value ref in a schedule with floor m and
// range R = peak - floor:
//   |lr - ref| <= eps * (4 |ref| + k (1 + c) (ref - m) + a R)
// with eps = 2^-52. The first term covers lerp's rounding; the second the
// weight's relative error, k = 8 ulp (CosPi/SinPi <= 3 ulp squared, the
// fractions k/n and (n-k)/n, the division in 1-sqrt) times the condition
// number 1 + c of the formula (c = power for polynomial, c = the exponent
// decay_rate * step / decay_steps for natural-exp, whose product is
// rounded); a = 16 * cycles for HF cosine with num_cycles != 0.5, whose
// argument cycles * progress is rounded, so near its zeros only an absolute
// bound holds; a = 0 otherwise. Near the end of a cosine phase the bound is
// thus relative to lr - min_lr, the quantity a float32 1 + cos(pi) loses.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "lockstep/numerics/cospi.h"
#include "lockstep/numerics/lr_schedule.h"
#include "numerics/lr_schedule_random.h"

namespace lockstep {
namespace {

using K = ScheduleKind;
constexpr double kEps = std::numeric_limits<double>::epsilon();

// A 200-bit MPFR number with value semantics, enough for the formulas.
class Mp {
 public:
  Mp(double d = 0) {  // NOLINT: implicit, exact
    mpfr_init2(v_, 200);
    mpfr_set_d(v_, d, MPFR_RNDN);
  }
  static Mp Int(int64_t i) {
    Mp m;
    mpfr_set_sj(m.v_, i, MPFR_RNDN);
    return m;
  }
  Mp(const Mp& o) {
    mpfr_init2(v_, 200);
    mpfr_set(v_, o.v_, MPFR_RNDN);
  }
  Mp& operator=(const Mp& o) {
    mpfr_set(v_, o.v_, MPFR_RNDN);
    return *this;
  }
  ~Mp() { mpfr_clear(v_); }
  double ToDouble() const { return mpfr_get_d(v_, MPFR_RNDN); }

  using Fn2 = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);
  using Fn1 = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
  static Mp Apply(Fn2 f, const Mp& a, const Mp& b) {
    Mp r;
    f(r.v_, a.v_, b.v_, MPFR_RNDN);
    return r;
  }
  static Mp Apply(Fn1 f, const Mp& a) {
    Mp r;
    f(r.v_, a.v_, MPFR_RNDN);
    return r;
  }

 private:
  mpfr_t v_;
};

Mp operator+(const Mp& a, const Mp& b) { return Mp::Apply(mpfr_add, a, b); }
Mp operator-(const Mp& a, const Mp& b) { return Mp::Apply(mpfr_sub, a, b); }
Mp operator*(const Mp& a, const Mp& b) { return Mp::Apply(mpfr_mul, a, b); }
Mp operator/(const Mp& a, const Mp& b) { return Mp::Apply(mpfr_div, a, b); }
// cos(pi a), sin(pi a) (MPFR 4.2; exact zeros at half-integers).
Mp CosPiRef(const Mp& a) { return Mp::Apply(mpfr_cospi, a); }
Mp SinPiRef(const Mp& a) { return Mp::Apply(mpfr_sinpi, a); }
Mp Exp(const Mp& a) { return Mp::Apply(mpfr_exp, a); }
Mp Sqrt(const Mp& a) { return Mp::Apply(mpfr_sqrt, a); }
Mp Pow(const Mp& a, const Mp& b) { return Mp::Apply(mpfr_pow, a, b); }
Mp Floor(const Mp& a) { return Mp::Apply(mpfr_rint_floor, a); }
Mp I(int64_t i) { return Mp::Int(i); }

// HF's cosine factor 0.5 * (1 + cos(pi * 2 * cycles * progress)).
Mp HalfCos(const Mp& x) { return Mp(0.5) * (Mp(1) + CosPiRef(x)); }

// The shape of HF's WSD ramps, going down over progress p.
Mp Down(RampShape shape, const Mp& p) {
  if (shape == RampShape::kLinear) return Mp(1) - p;
  if (shape == RampShape::kCosine) return HalfCos(p);
  return Mp(1) - Sqrt(p);
}

// PyTorch OneCycleLR._get_lr with its float phase ends, in MPFR.
Mp OneCycle(const ScheduleConfig& c, int64_t step) {
  double initial = c.max_lr / c.div_factor;
  double low = initial / c.final_div_factor;
  double p = c.pct_start * static_cast<double>(c.total_steps);
  double t = static_cast<double>(c.total_steps) - 1;
  double ends[3] = {p - 1, c.three_phase ? 2 * p - 2 : t, t};
  double from[3] = {initial, c.max_lr, c.three_phase ? initial : low};
  double to[3] = {c.max_lr, c.three_phase ? initial : low, low};
  int n = c.three_phase ? 3 : 2;
  int i = 0;
  double start = 0;
  while (i < n - 1 && static_cast<double>(step) > ends[i]) start = ends[i++];
  Mp pct = (I(step) - Mp(start)) / (Mp(ends[i]) - Mp(start));
  if (pct.ToDouble() > 1) pct = Mp(1);
  Mp f = c.anneal == RampShape::kCosine ? HalfCos(pct) : Mp(1) - pct;
  return Mp(to[i]) + (Mp(from[i]) - Mp(to[i])) * f;
}

// The weight in [0, 1] of the other schedules, from their sources.
Mp Weight(const ScheduleConfig& c, int64_t s, double* cond) {
  int64_t w = c.warmup_steps;
  auto exponent = [&] {
    Mp x = I(s) / I(c.decay_steps);
    return c.staircase ? Floor(x) : x;
  };
  switch (c.kind) {
    case K::kCosineDecay:
      return HalfCos(I(std::min(s, c.decay_steps)) / I(c.decay_steps));
    case K::kCosineRestarts: {
      int64_t start = 0, len = c.period;
      if (c.period_mult == 1) start = s / len * len;  // PyTorch: s % T_0
      while (s >= start + len) start += len, len *= c.period_mult;
      return HalfCos(I(s - start) / I(len));
    }
    case K::kExponential:
      return Pow(Mp(c.decay_rate), exponent());
    case K::kNaturalExp:
      *cond = (Mp(c.decay_rate) * exponent()).ToDouble();
      return Exp(Mp(0) - Mp(c.decay_rate) * exponent());
    case K::kInverseTime:
      return Mp(1) / (Mp(1) + Mp(c.decay_rate) * exponent());
    case K::kWsd: {
      int64_t se = w + c.stable_steps;
      if (s < w) return Down(c.warmup_shape, Mp(1) - I(s) / I(w));
      if (s < se) return Mp(1);
      if (s < se + c.decay_steps)
        return Down(c.decay_shape, I(s - se) / I(c.decay_steps));
      return Mp(0);
    }
    case K::kInverseSqrt: {
      if (s < w) return I(s) / I(w);
      int64_t ts = c.timescale ? c.timescale : w ? w : 10000;
      return Mp(1) / Sqrt(I(s + ts - w) / I(ts));
    }
    default:
      break;
  }
  if (s < w) return I(s) / I(w);
  if (c.kind == K::kConstantWarmup) return Mp(1);
  Mp progress = I(std::min(s, c.total_steps) - w) / I(c.total_steps - w);
  if (c.kind == K::kLinearWarmup) return Mp(1) - progress;
  if (c.kind == K::kPolynomial) {
    *cond = c.power;
    return Pow(Mp(1) - progress, Mp(c.power));
  }
  return HalfCos(Mp(2 * c.cycles) * progress);  // kCosineWarmup
}

Mp Reference(const LrSchedule& s, int64_t step, double* cond) {
  const ScheduleConfig& c = s.config();
  if (c.kind == K::kOneCycle) return OneCycle(c, step);
  Mp w = Weight(c, step, cond);
  return Mp(c.min_lr) + (Mp(c.max_lr) - Mp(c.min_lr)) * w;
}

class LrScheduleMpfrTest : public ::testing::TestWithParam<K> {};

TEST_P(LrScheduleMpfrTest, WithinWrittenToleranceOfMpfr) {
  testing::ScheduleSampler sampler(77 + static_cast<int>(GetParam()));
  double worst_rel = 0;    // max |lr - ref| / (eps |ref|)
  double worst_share = 0;  // max |lr - ref| / tol
  for (int i = 0; i < 150; ++i) {
    LrSchedule s = *LrSchedule::Create(sampler.Config(GetParam()));
    const ScheduleConfig& c = s.config();
    for (int64_t step : sampler.SampleSteps(c, 20)) {
      double cond = 0;
      Mp ref_mp =
          c.kind == K::kPiecewise ? Mp(s.At(step)) : Reference(s, step, &cond);
      double ref = ref_mp.ToDouble(), got = s.At(step);
      double above = ref - s.floor();
      double a =
          (c.kind == K::kCosineWarmup && c.cycles != 0.5) ? 16 * c.cycles : 0;
      double tol =
          kEps * (4 * std::fabs(ref) + 8 * (1 + std::fabs(cond)) * above +
                  a * (s.peak() - s.floor()));
      double err = std::fabs((Mp(got) - ref_mp).ToDouble());
      ASSERT_LE(err, tol) << ScheduleKindName(c.kind) << " step " << step
                          << ": " << got << " vs MPFR " << ref << " (max "
                          << c.max_lr << ", min " << c.min_lr << ")";
      if (ref != 0) worst_rel = std::max(worst_rel, err / (kEps * ref));
      if (tol > 0) worst_share = std::max(worst_share, err / tol);
    }
  }
  std::printf("[ INFO ] %s: worst |lr - ref| %.2f eps |ref|, %.2f of tol\n",
              std::string(ScheduleKindName(GetParam())).c_str(), worst_rel,
              worst_share);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, LrScheduleMpfrTest,
                         ::testing::Values(K::kCosineDecay, K::kCosineRestarts,
                                           K::kLinearWarmup, K::kCosineWarmup,
                                           K::kPolynomial, K::kExponential,
                                           K::kNaturalExp, K::kInverseTime,
                                           K::kOneCycle, K::kWsd,
                                           K::kInverseSqrt, K::kConstantWarmup),
                         [](const ::testing::TestParamInfo<K>& info) {
                           std::string n(ScheduleKindName(info.param));
                           std::erase(n, '-');
                           return n;
                         });

// PyTorch's one-cycle gives 5.07464715475788e-05 at step 98 of 100 (max_lr
// 0.1); lockstep gives a value that differs in the 14th digit. MPFR decides.
TEST(LrScheduleMpfrTest, OneCycleNearItsEndIsCloserToMpfrThanPyTorch) {
  ScheduleConfig c;
  c.kind = K::kOneCycle;
  c.max_lr = 0.1;
  c.total_steps = 100;
  LrSchedule s = *LrSchedule::Create(c);
  double ref = OneCycle(c, 98).ToDouble();
  const double kPyTorch = 5.07464715475788e-05;
  EXPECT_LT(std::fabs(s.At(98) - ref), std::fabs(kPyTorch - ref) / 100);
}

// Ulp distance measured against the MPFR value's own ulp.
double Ulps(double got, const Mp& ref) {
  double r = ref.ToDouble();
  if (r == 0) return got == 0 ? 0 : HUGE_VAL;
  int e;
  std::frexp(r, &e);
  return std::fabs((Mp(got) - ref).ToDouble()) / std::ldexp(1.0, e - 53);
}

TEST(CosPiMpfrTest, WithinThreeUlpOverSweeps) {
  testing::ScheduleSampler rng(5);
  double worst_cos = 0, worst_sin = 0;
  for (int i = 0; i < 400000; ++i) {
    double x = i % 2 ? rng.Uniform(-4, 4)
                     : std::ldexp(rng.Uniform(0.5, 1),
                                  -static_cast<int>(rng.Uniform(0, 60)));
    if (i % 3 == 0) x = 0.5 - x * 0x1p-8;  // near a zero of cos
    worst_cos = std::max(worst_cos, Ulps(CosPi(x), CosPiRef(Mp(x))));
    worst_sin = std::max(worst_sin, Ulps(SinPi(x), SinPiRef(Mp(x))));
  }
  std::printf("[ INFO ] CosPi worst %.3f ulp, SinPi worst %.3f ulp\n",
              worst_cos, worst_sin);
  EXPECT_LE(worst_cos, 3.0);
  EXPECT_LE(worst_sin, 3.0);
}

}  // namespace
}  // namespace lockstep
