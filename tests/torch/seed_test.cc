#include "lockstep/torch/seed.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <stdlib.h>

namespace lockstep {
namespace {

class SeedTest : public ::testing::Test {
 protected:
  void SetUp() override { at::set_num_threads(2); }
  void TearDown() override {
    at::globalContext().setDeterministicAlgorithms(false, false);
    at::globalContext().setDeterministicCuDNN(false);
    unsetenv("CUBLAS_WORKSPACE_CONFIG");
  }
};

TEST_F(SeedTest, TwoSeedAllRunsGiveIdenticalRandn) {
  SeedAll(7, false);
  at::Tensor a = at::randn({1000});
  at::Tensor a2 = at::rand({10});
  at::randn({3});  // advance the generator
  SeedAll(7, false);
  at::Tensor b = at::randn({1000});
  at::Tensor b2 = at::rand({10});
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_TRUE(at::equal(a2, b2));
  SeedAll(8, false);
  EXPECT_FALSE(at::equal(a, at::randn({1000})));
}

TEST_F(SeedTest, DeterministicFlagsAreSetAndReadBack) {
  at::globalContext().setBenchmarkCuDNN(true);
  SeedRecord r = SeedAll(3, true);
  EXPECT_TRUE(at::globalContext().deterministicAlgorithms());
  EXPECT_FALSE(at::globalContext().deterministicAlgorithmsWarnOnly());
  EXPECT_TRUE(at::globalContext().deterministicCuDNN());
  EXPECT_FALSE(at::globalContext().benchmarkCuDNN());
  EXPECT_TRUE(r.deterministic && r.deterministic_algorithms);
  EXPECT_TRUE(r.cudnn_deterministic);
  EXPECT_FALSE(r.cudnn_benchmark);
  r = SeedAll(3, false);
  EXPECT_FALSE(at::globalContext().deterministicAlgorithms());
  EXPECT_FALSE(r.deterministic_algorithms);
  EXPECT_FALSE(r.cudnn_deterministic);
}

TEST_F(SeedTest, CublasWorkspaceConfigIsSetOnlyWhenUnset) {
  unsetenv("CUBLAS_WORKSPACE_CONFIG");
  SeedRecord r = SeedAll(1, true);
  EXPECT_TRUE(r.cublas_workspace_config_set);
  EXPECT_EQ(r.cublas_workspace_config, ":4096:8");
  ASSERT_NE(getenv("CUBLAS_WORKSPACE_CONFIG"), nullptr);
  EXPECT_STREQ(getenv("CUBLAS_WORKSPACE_CONFIG"), ":4096:8");
  setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8", 1);
  r = SeedAll(1, true);
  EXPECT_FALSE(r.cublas_workspace_config_set);
  EXPECT_EQ(r.cublas_workspace_config, ":16:8");
  unsetenv("CUBLAS_WORKSPACE_CONFIG");
  r = SeedAll(1, false);
  EXPECT_FALSE(r.cublas_workspace_config_set);
  EXPECT_EQ(r.cublas_workspace_config, std::nullopt);
}

TEST_F(SeedTest, PhiloxSeedAndLastRecordFollowSeedAll) {
  SeedRecord r = SeedAll(0x123456789abcull, false);
  EXPECT_EQ(DefaultPhiloxSeed(), 0x123456789abcull);
  EXPECT_EQ(r.philox_seed, 0x123456789abcull);
  ASSERT_TRUE(LastSeedRecord().has_value());
  EXPECT_EQ(*LastSeedRecord(), r);
  SetDefaultPhiloxSeed(5);
  EXPECT_EQ(DefaultPhiloxSeed(), 5u);
}

TEST_F(SeedTest, CpuOnlyBuildSeedsNoCudaGenerator) {
  SeedRecord r = SeedAll(1, false);
  if (!at::hasCUDA()) {
    EXPECT_EQ(r.cuda_generators_seeded, 0);
  }
  EXPECT_GE(r.cuda_generators_seeded, 0);
}

TEST_F(SeedTest, RecordGoesIntoTheFingerprintSeedSection) {
  EnvFingerprint fp;
  AddSeedRecord(SeedAll(42, true), &fp);
  ASSERT_NE(fp.Find("seed.seed"), nullptr);
  EXPECT_EQ(*fp.Find("seed.seed")->value, "42");
  EXPECT_EQ(*fp.Find("seed.deterministic")->value, "true");
  EXPECT_EQ(*fp.Find("seed.philox")->value, "42");
  ASSERT_NE(fp.Find("seed.cuda_generators"), nullptr);
  if (!at::hasCUDA()) {
    EXPECT_EQ(*fp.Find("seed.cuda_generators")->value, "0");
  }
}

}  // namespace
}  // namespace lockstep
