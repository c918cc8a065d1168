#include "lockstep/torch/overflow_status.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "lockstep/numerics/half.h"
#include "lockstep/torch/grad_scaler.h"

namespace lockstep {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

class OverflowStatusTest : public ::testing::Test {
 protected:
  void SetUp() override { at::set_num_threads(2); }
};

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Every fp16 value, its float neighbours and the midpoints to the next fp16
// value (the rounding boundaries), through RoundToFp16 against lockstep's
// own scalar conversion (tested over all 65,536 patterns in numerics).
TEST_F(OverflowStatusTest,
       RoundToFp16MatchesTheScalarReferenceAtAllBoundaries) {
  std::vector<float> xs;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float v = HalfToFloat(static_cast<uint16_t>(h));
    float next =
        HalfToFloat(static_cast<uint16_t>(h + 1 == 0x10000 ? h : h + 1));
    if (std::isnan(v)) continue;
    xs.push_back(v);
    xs.push_back(std::nextafter(v, kInf));
    xs.push_back(std::nextafter(v, -kInf));
    if (std::isfinite(v) && std::isfinite(next)) xs.push_back((v + next) / 2);
  }
  xs.push_back(kNaN);
  at::Tensor x = at::from_blob(xs.data(), {int64_t(xs.size())}, at::kFloat);
  at::Tensor r = RoundToFp16(x, Fp16OverflowMode::kInfNan, nullptr);
  const float* got = r.data_ptr<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    float want = HalfToFloat(FloatToHalf(xs[i]));
    bool same =
        std::isnan(want) ? std::isnan(got[i]) : Bits(got[i]) == Bits(want);
    ASSERT_TRUE(same) << "x " << xs[i] << " (index " << i << "): got " << got[i]
                      << ", want " << want;
  }
}

TEST_F(OverflowStatusTest, SaturationModeSaturatesZeroesNaNAndSetsTheStatus) {
  FloatStatus status;
  at::Tensor fits = at::tensor({65519.0f, -65519.0f, 1.0f, -0.0f, 1e-8f});
  at::Tensor r = RoundToFp16(fits, Fp16OverflowMode::kSaturation, &status);
  EXPECT_FALSE(status.Test()) << "65519 rounds to 65504: no overflow";
  EXPECT_EQ(r[0].item<float>(), 65504.0f);
  EXPECT_TRUE(std::signbit(r[3].item<float>()));  // -0 stays -0
  EXPECT_EQ(r[4].item<float>(), 0.0f);            // underflow is not flagged

  at::Tensor over = at::tensor({65520.0f, -1e6f, kInf, kNaN, 3.0f});
  r = RoundToFp16(over, Fp16OverflowMode::kSaturation, &status);
  EXPECT_TRUE(status.Test());
  EXPECT_TRUE(
      at::equal(r, at::tensor({65504.0f, -65504.0f, 65504.0f, 0.0f, 3.0f})))
      << r;
}

TEST_F(OverflowStatusTest, InfNanModeGivesInfAndSetsTheStatus) {
  FloatStatus status;
  at::Tensor r = RoundToFp16(at::tensor({65520.0f, -7e4f, 2.0f}),
                             Fp16OverflowMode::kInfNan, &status);
  EXPECT_TRUE(status.Test());
  EXPECT_EQ(r[0].item<float>(), kInf);
  EXPECT_EQ(r[1].item<float>(), -kInf);
  EXPECT_EQ(r[2].item<float>(), 2.0f);
}

TEST_F(OverflowStatusTest, StatusIsStickyUntilCleared) {
  FloatStatus status;
  RoundToFp16(at::tensor({1e5f}), Fp16OverflowMode::kSaturation, &status);
  RoundToFp16(at::tensor({1.0f}), Fp16OverflowMode::kSaturation, &status);
  EXPECT_TRUE(status.Test()) << "a clean op must not reset the flag";
  status.Clear();
  EXPECT_FALSE(status.Test());
}

TEST_F(OverflowStatusTest, EmulatorRoundsTheBackwardGradient) {
  FloatStatus status;
  Fp16Emulator emu(Fp16OverflowMode::kSaturation, &status);
  at::Tensor x = at::tensor({1.0f, 2.0f}).requires_grad_(true);
  at::Tensor y = emu.Apply(x);
  EXPECT_FALSE(status.Test()) << "the forward values fit";
  (y * 1e5f).sum().backward();
  EXPECT_TRUE(status.Test()) << "the gradient 1e5 does not fit in fp16";
  EXPECT_TRUE(at::equal(x.grad(), at::full({2}, 65504.0f))) << x.grad();
}

// The scenario of NPU saturation mode: the scaled loss's gradient
// overflows fp16, but the stored values are +-65504, finite. The value check
// passes the step (and applies garbage); the status check skips it.
TEST_F(OverflowStatusTest, ValueCheckMissesSaturatedOverflowStatusCatchesIt) {
  at::manual_seed(3);
  at::Tensor w0 = at::randn({4, 4});
  at::Tensor x = at::randn({8, 4});
  for (OverflowCheck check : {OverflowCheck::kValue, OverflowCheck::kStatus}) {
    FloatStatus status;
    Fp16Emulator emu(Fp16OverflowMode::kSaturation, &status);
    at::Tensor w = w0.clone().requires_grad_(true);
    torch::optim::SGD opt({w}, torch::optim::SGDOptions(0.1));
    GradScalerOptions o;
    o.check = check;
    o.status = &status;
    o.loss_scale.init_scale = 1e9;  // far too large for fp16
    StatusOr<GradScaler> scaler = GradScaler::Create(o);
    ASSERT_TRUE(scaler.ok());
    at::Tensor h = emu.Apply(at::matmul(x, emu.Apply(w).t()));
    scaler->Scale(h.pow(2).mean()).backward();
    EXPECT_TRUE(status.Test()) << "the emulated fp16 gradient overflowed";
    EXPECT_TRUE(at::isfinite(w.grad()).all().item<bool>())
        << "saturation mode leaves finite values";
    StatusOr<bool> stepped = scaler->Step(opt);
    ASSERT_TRUE(stepped.ok());
    if (check == OverflowCheck::kValue) {
      EXPECT_TRUE(*stepped) << "the value check misses the overflow";
      EXPECT_FALSE(at::equal(w.detach(), w0));
    } else {
      EXPECT_FALSE(*stepped) << "the status check catches it";
      EXPECT_TRUE(at::equal(w.detach(), w0));
    }
  }
}

// In IEEE inf/nan mode the same overflow is visible to the value check.
TEST_F(OverflowStatusTest, ValueCheckCatchesTheOverflowInInfNanMode) {
  at::manual_seed(3);
  Fp16Emulator emu(Fp16OverflowMode::kInfNan, nullptr);
  at::Tensor w = at::randn({4, 4}).requires_grad_(true);
  torch::optim::SGD opt({w}, torch::optim::SGDOptions(0.1));
  GradScalerOptions o;
  o.loss_scale.init_scale = 1e9;
  StatusOr<GradScaler> scaler = GradScaler::Create(o);
  ASSERT_TRUE(scaler.ok());
  at::Tensor h = emu.Apply(at::matmul(at::randn({8, 4}), emu.Apply(w).t()));
  scaler->Scale(h.pow(2).mean()).backward();
  StatusOr<bool> stepped = scaler->Step(opt);
  ASSERT_TRUE(stepped.ok());
  EXPECT_FALSE(*stepped);
}

}  // namespace
}  // namespace lockstep
