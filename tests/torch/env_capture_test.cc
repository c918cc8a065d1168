#include "lockstep/torch/env_capture.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <torch/nn/modules/linear.h>
#include <torch/version.h>

#include <filesystem>

#include "lockstep/compare/env_diff.h"
#include "lockstep/curve/tfrecord.h"

namespace lockstep {
namespace {

class EnvCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override { at::set_num_threads(2); }
  void TearDown() override {
    at::globalContext().setDeterministicAlgorithms(false, false);
    unsetenv("CUBLAS_WORKSPACE_CONFIG");
    unsetenv("HCCL_DETERMINISTIC");
  }
  static std::string Value(const EnvFingerprint& fp, std::string_view key) {
    const EnvField* f = fp.Find(key);
    if (f == nullptr) return "(absent)";
    return f->value ? *f->value : "(unset)";
  }
};

TEST_F(EnvCaptureTest, RecordsLibTorchThreadsSeedsAndFlags) {
  SeedAll(7, true);
  StatusOr<EnvFingerprint> fp = CaptureEnvFingerprint();
  ASSERT_TRUE(fp.ok()) << fp.status().ToString();
  EXPECT_EQ(Value(*fp, "libtorch.version"), TORCH_VERSION);
  EXPECT_EQ(Value(*fp, "threads.intra_op"), "2");
  EXPECT_EQ(Value(*fp, "seed.seed"), "7");
  EXPECT_EQ(Value(*fp, "seed.torch_cpu"), "7");
  EXPECT_EQ(Value(*fp, "seed.philox"), "7");
  EXPECT_EQ(Value(*fp, "determinism.deterministic_algorithms"), "true");
  EXPECT_EQ(Value(*fp, "determinism.cudnn_benchmark"), "false");
  EXPECT_EQ(Value(*fp, "env.CUBLAS_WORKSPACE_CONFIG"), ":4096:8");
  EXPECT_EQ(Value(*fp, "precision.float32_matmul_precision"), "highest");
  EXPECT_NE(Value(*fp, "libtorch.build_config").find("built with"),
            std::string::npos);
  EXPECT_NE(Value(*fp, "cpu.aten_capability"), "(absent)");
  EXPECT_NE(Value(*fp, "compiler.lockstep"), "");
  if (!at::hasCUDA()) {
    EXPECT_EQ(Value(*fp, "device.cuda_devices"), "0");
  }
}

TEST_F(EnvCaptureTest, UnsetEnvVarIsNullAndSetOneIsItsValue) {
  unsetenv("HCCL_DETERMINISTIC");
  EnvFingerprint a = *CaptureEnvFingerprint();
  EXPECT_EQ(Value(a, "env.HCCL_DETERMINISTIC"), "(unset)");
  setenv("HCCL_DETERMINISTIC", "true", 1);
  EnvFingerprint b = *CaptureEnvFingerprint();
  EXPECT_EQ(Value(b, "env.HCCL_DETERMINISTIC"), "true");
  EnvDiff d = DiffEnvFingerprints(a, b);
  ASSERT_GE(d.differences.size(), 1u);
  EXPECT_EQ(d.differences[0].key, "env.HCCL_DETERMINISTIC");
  EXPECT_EQ(d.relevant(), 1u);  // captured_at may differ too: impact none
}

// The kernel path of lockstep's own statistics (numerics/cpu_features.h)
// is recorded with the other numerics variables.
TEST_F(EnvCaptureTest, RecordsLockstepsCpuLevel) {
  setenv("LOCKSTEP_CPU_LEVEL", "portable", 1);
  EXPECT_EQ(Value(*CaptureEnvFingerprint(), "env.LOCKSTEP_CPU_LEVEL"),
            "portable");
  unsetenv("LOCKSTEP_CPU_LEVEL");
  EXPECT_EQ(Value(*CaptureEnvFingerprint(), "env.LOCKSTEP_CPU_LEVEL"),
            "(unset)");
}

TEST_F(EnvCaptureTest, RunFieldsComeFromTheCaller) {
  EnvCaptureOptions o;
  o.run = {{"dtype", "bf16"}, {"amp", "O1"}};
  EnvFingerprint fp = *CaptureEnvFingerprint(o);
  EXPECT_EQ(Value(fp, "run.dtype"), "bf16");
  EXPECT_EQ(Value(fp, "run.amp"), "O1");
}

TEST_F(EnvCaptureTest, ParameterChecksumsFollowTheSeed) {
  EnvCaptureOptions o;
  SeedAll(1, false);
  torch::nn::Linear a(4, 3);
  SeedAll(1, false);
  torch::nn::Linear b(4, 3);
  SeedAll(2, false);
  torch::nn::Linear c(4, 3);
  o.model = a.ptr().get();
  EnvFingerprint fa = *CaptureEnvFingerprint(o);
  o.model = b.ptr().get();
  EnvFingerprint fb = *CaptureEnvFingerprint(o);
  o.model = c.ptr().get();
  EnvFingerprint fc = *CaptureEnvFingerprint(o);
  ASSERT_EQ(fa.parameters.size(), 2u);
  EXPECT_EQ(fa.parameters[0].name, "weight");
  EXPECT_EQ(fa.parameters[0].shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(fa.parameters[1].name, "bias");
  EXPECT_EQ(fa.parameters, fb.parameters);
  EXPECT_NE(fa.parameters[0].crc32c, fc.parameters[0].crc32c);
  EnvDiff d = DiffEnvFingerprints(fa, fc);
  ASSERT_FALSE(d.differences.empty());
  EXPECT_EQ(d.differences[0].key, "parameters");
}

TEST_F(EnvCaptureTest, TensorChecksumIsCrc32cOfTheCOrderBytes) {
  at::Tensor t = at::arange(6, at::kFloat).reshape({2, 3});
  EnvChecksum c = TensorChecksum("x", t);
  EXPECT_EQ(c.dtype, "Float");
  EXPECT_EQ(c.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c.crc32c, Crc32c(std::string_view(
                          static_cast<const char*>(t.data_ptr()), t.nbytes())));
  at::Tensor tt = t.t().contiguous().t();  // same values, other strides
  EXPECT_EQ(TensorChecksum("x", tt).crc32c, c.crc32c);
  EXPECT_NE(TensorChecksum("x", t + 1).crc32c, c.crc32c);
  EXPECT_EQ(TensorChecksum("u", at::Tensor()).dtype, "undefined");
}

TEST_F(EnvCaptureTest, WriteEnvFingerprintWritesEnvJsonThatReadsBack) {
  std::string dir = ::testing::TempDir() + "env_capture_test/run";
  std::filesystem::remove_all(dir);
  EnvCaptureOptions o;
  o.data = {{"batch0", at::ones({2, 2})}};
  ASSERT_TRUE(WriteEnvFingerprint(dir, o).ok());
  StatusOr<EnvFingerprint> back = ReadEnvFingerprint(dir + "/env.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->data.size(), 1u);
  EXPECT_EQ(back->data[0], TensorChecksum("batch0", at::ones({2, 2})));
  EnvFingerprint now = *CaptureEnvFingerprint(o);
  EXPECT_EQ(DiffEnvFingerprints(*back, now).relevant(), 0u);
  std::filesystem::remove_all(::testing::TempDir() + "env_capture_test");
}

}  // namespace
}  // namespace lockstep
