#include "lockstep/torch/random_tensor.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "lockstep/numerics/philox.h"
#include "testing/run_lockstep.h"

namespace lockstep {
namespace {

class RandomTensorTest : public ::testing::Test {
 protected:
  void SetUp() override { at::set_num_threads(2); }
};

// Bitwise comparison of a float tensor with a reference vector; prints the
// first bad index.
void ExpectSameFloatBits(const at::Tensor& t, const std::vector<float>& want) {
  ASSERT_EQ(t.scalar_type(), at::kFloat);
  ASSERT_EQ(static_cast<size_t>(t.numel()), want.size());
  at::Tensor c = t.contiguous();
  const float* got = c.data_ptr<float>();
  for (size_t i = 0; i < want.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &got[i], 4);
    std::memcpy(&b, &want[i], 4);
    ASSERT_EQ(a, b) << "first difference at element " << i << ": " << got[i]
                    << " vs " << want[i];
  }
}

TEST_F(RandomTensorTest, UniformAndNormalEqualTheNumericsStreams) {
  PhiloxStreamRef s{7, 3, 5};
  std::vector<float> u(2 * 3 * 5), n(2 * 3 * 5);
  FillUniform(7, 3, 5, u.size(), u.data());
  FillNormal(7, 3, 5, n.size(), n.data());
  ExpectSameFloatBits(PhiloxUniform({2, 3, 5}, s), u);
  ExpectSameFloatBits(PhiloxNormal({2, 3, 5}, s), n);
}

TEST_F(RandomTensorTest, BernoulliMaskEqualsTheNumericsStream) {
  std::vector<uint8_t> want(1000);
  FillBernoulli(11, 0, 0, want.size(), 0.3, want.data());
  at::Tensor m = PhiloxBernoulliMask({10, 100}, 0.3, {11, 0, 0});
  ASSERT_EQ(m.scalar_type(), at::kBool);
  at::Tensor bytes = m.to(at::kByte).reshape({-1});
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(bytes[i].item<uint8_t>(), want[i]) << "element " << i;
  }
  EXPECT_EQ(PhiloxBernoulliMask({64}, 0.0, {1}).sum().item<int64_t>(), 0);
  EXPECT_EQ(PhiloxBernoulliMask({64}, 1.0, {1}).sum().item<int64_t>(), 64);
  at::Tensor f = PhiloxBernoulliMask({1000}, 0.3, {11}, at::kFloat);
  EXPECT_TRUE(at::equal(f, m.reshape({-1}).to(at::kFloat)));
}

TEST_F(RandomTensorTest, ShapeAndThreadCountDoNotChangeTheBits) {
  const int64_t n = 100003;  // several parallel chunks, odd size
  at::set_num_threads(1);
  at::Tensor one = PhiloxNormal({n}, {5, 1});
  at::set_num_threads(2);
  at::Tensor two = PhiloxNormal({n}, {5, 1});
  EXPECT_TRUE(at::equal(one, two));
  EXPECT_TRUE(at::equal(PhiloxNormal({7, 14287 + 2}, {5, 1}).reshape({-1}),
                        PhiloxNormal({7 * 14289}, {5, 1})));
  // A slice of the stream equals the tensor made from its start.
  EXPECT_TRUE(
      at::equal(one.slice(0, 1000, 1010), PhiloxNormal({10}, {5, 1, 1000})));
}

TEST_F(RandomTensorTest, OtherDtypesAreConvertedOnTheHost) {
  PhiloxStreamRef s{9, 0, 0};
  at::Tensor f = PhiloxNormal({257}, s);
  at::Tensor d = PhiloxNormal({257}, s, at::kDouble);
  ASSERT_EQ(d.scalar_type(), at::kDouble);
  EXPECT_TRUE(at::equal(d.to(at::kFloat), f));  // widening is exact
  at::Tensor h = PhiloxUniform({257}, s, at::kHalf);
  EXPECT_TRUE(at::equal(h, PhiloxUniform({257}, s).to(at::kHalf)));
  EXPECT_EQ(PhiloxUniform({1}, s, at::kBFloat16).scalar_type(), at::kBFloat16);
}

TEST_F(RandomTensorTest, EmptyAndScalarShapes) {
  EXPECT_EQ(PhiloxUniform({0, 3}, {1}).numel(), 0);
  at::Tensor s = PhiloxUniform({}, {1, 2, 3});
  EXPECT_EQ(s.dim(), 0);
  float want;
  FillUniform(1, 2, 3, 1, &want);
  EXPECT_EQ(s.item<float>(), want);
}

// The values `lockstep rng` prints (%.9g round-trips floats exactly).
std::vector<float> RngFloats(const std::string& args) {
  testing::CmdRun r = testing::RunLockstep("rng " + args);
  EXPECT_EQ(r.code, 0) << r.out;
  std::vector<float> v;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    v.push_back(std::strtof(line.c_str(), nullptr));
  return v;
}

TEST_F(RandomTensorTest, BitsEqualWhatLockstepRngPrints) {
  ExpectSameFloatBits(PhiloxNormal({4, 5}, {7, 3, 2}),
                      RngFloats("--seed 7 --offset 3 --start 2 --count 20 "
                                "--dist normal"));
  ExpectSameFloatBits(PhiloxUniform({20}, {7, 3, 2}),
                      RngFloats("--seed 7 --offset 3 --start 2 --count 20 "
                                "--dist uniform"));
  ExpectSameFloatBits(
      PhiloxBernoulliMask({20}, 0.25, {7}, at::kFloat),
      RngFloats("--seed 7 --count 20 --dist bernoulli --p 0.25"));
}

}  // namespace
}  // namespace lockstep
