#include "lockstep/compare/env_diff.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "lockstep/compare/run_env.h"
#include "lockstep/core/file.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

EnvFingerprint Base() {
  EnvFingerprint fp;
  fp.Set("host", "hostname", "alpha");
  fp.Set("compiler", "lockstep", "GCC 12.2.0");
  fp.Set("cpu", "features", "avx avx2 fma");
  fp.Set("threads", "intra_op", "2");
  fp.Set("env", "OMP_NUM_THREADS", std::nullopt);
  fp.Set("env", "CUBLAS_WORKSPACE_CONFIG", std::nullopt);
  fp.Set("libtorch", "version", "1.13.0");
  fp.Set("blas", "build", "generic");
  fp.Set("precision", "float32_matmul_precision", "highest");
  fp.Set("determinism", "deterministic_algorithms", "true");
  fp.Set("seed", "torch", "7");
  fp.parameters.push_back({"w", "float32", {2, 2}, 1});
  fp.parameters.push_back({"b", "float32", {2}, 2});
  return fp;
}

std::vector<std::string> Keys(const EnvDiff& d) {
  std::vector<std::string> k;
  for (const auto& x : d.differences) k.push_back(x.key);
  return k;
}

TEST(EnvDiffTest, IdenticalFingerprintsHaveNoDifferences) {
  EnvDiff d = DiffEnvFingerprints(Base(), Base());
  EXPECT_TRUE(d.differences.empty());
  EXPECT_EQ(d.relevant(), 0u);
}

TEST(EnvDiffTest, DifferencesAreRankedByLikelihoodOfChangingNumbers) {
  EnvFingerprint a = Base(), b = Base();
  // Set in the opposite order of the expected ranking.
  b.Set("host", "hostname", "beta");
  b.Set("compiler", "lockstep", "GCC 13.1.0");
  b.Set("cpu", "features", "avx avx2 fma avx512f");
  b.Set("env", "OMP_NUM_THREADS", "4");
  b.Set("threads", "intra_op", "4");
  b.Set("blas", "build", "mkl");
  b.Set("libtorch", "version", "2.1.0");
  b.Set("env", "CUBLAS_WORKSPACE_CONFIG", ":4096:8");
  b.Set("precision", "float32_matmul_precision", "high");
  b.Set("determinism", "deterministic_algorithms", "false");
  b.Set("seed", "torch", "8");
  b.parameters[1].crc32c = 3;
  EnvDiff d = DiffEnvFingerprints(a, b);
  EXPECT_EQ(
      Keys(d),
      (std::vector<std::string>{
          "parameters", "seed.torch", "determinism.deterministic_algorithms",
          "precision.float32_matmul_precision", "env.CUBLAS_WORKSPACE_CONFIG",
          "libtorch.version", "blas.build", "threads.intra_op",
          "env.OMP_NUM_THREADS", "cpu.features", "compiler.lockstep",
          "host.hostname"}));
  EXPECT_EQ(d.relevant(), d.differences.size() - 1);
  EXPECT_EQ(d.differences.back().impact, EnvImpact::kNone);
  EXPECT_EQ(d.differences.front().impact, EnvImpact::kCertain);
}

TEST(EnvDiffTest, HostnameOnlyDifferenceIsNotRelevant) {
  EnvFingerprint b = Base();
  b.Set("host", "hostname", "beta");
  EnvDiff d = DiffEnvFingerprints(Base(), b);
  ASSERT_EQ(d.differences.size(), 1u);
  EXPECT_EQ(d.relevant(), 0u);
  EXPECT_EQ(DescribeEnvDifference(d.differences[0]),
            "[none] host.hostname: alpha vs beta");
}

TEST(EnvDiffTest, AbsentFieldEqualsUnsetButNotASetOne) {
  EnvFingerprint a = Base(), b = Base();
  b.Set("env", "NVIDIA_TF32_OVERRIDE", std::nullopt);  // a lacks it: equal
  EXPECT_TRUE(DiffEnvFingerprints(a, b).differences.empty());
  b.Set("env", "NVIDIA_TF32_OVERRIDE", "0");
  EnvDiff d = DiffEnvFingerprints(a, b);
  ASSERT_EQ(d.differences.size(), 1u);
  EXPECT_EQ(d.differences[0].impact, EnvImpact::kLikely);
  EXPECT_EQ(DescribeEnvDifference(d.differences[0]),
            "[likely] env.NVIDIA_TF32_OVERRIDE: (absent) vs 0");
}

TEST(EnvDiffTest, ChecksumMismatchNamesTheFirstDifferentTensor) {
  EnvFingerprint a = Base(), b = Base();
  b.parameters[1].crc32c = 0xabcdef01;
  EnvDiff d = DiffEnvFingerprints(a, b);
  ASSERT_EQ(d.differences.size(), 1u);
  EXPECT_EQ(DescribeEnvDifference(d.differences[0]),
            "[certain] parameters: 1 of 2 differ, first #1 'b': crc32c "
            "00000002 vs abcdef01");
  b = Base();
  b.parameters[0].shape = {4};
  EXPECT_NE(DescribeEnvDifference(DiffEnvFingerprints(a, b).differences[0])
                .find("shape [2, 2] vs [4]"),
            std::string::npos);
  b = Base();
  b.parameters.pop_back();
  EXPECT_EQ(DescribeEnvDifference(DiffEnvFingerprints(a, b).differences[0]),
            "[certain] parameters: 2 tensors vs 1 tensors; the common 1 are "
            "equal");
}

TEST(EnvDiffTest, MissingChecksumsOnOneSideAreNotRelevant) {
  EnvFingerprint a = Base(), b = Base();
  b.parameters.clear();
  EnvDiff d = DiffEnvFingerprints(a, b);
  ASSERT_EQ(d.differences.size(), 1u);
  EXPECT_EQ(d.differences[0].impact, EnvImpact::kNone);
  EXPECT_EQ(d.differences[0].b, "(not recorded)");
}

TEST(EnvDiffTest, LongValuesShowWhereTheyDiffer) {
  EnvFingerprint a, b;
  a.Set("libtorch", "build_config", "PyTorch built with:\n  - GCC 12.2\n");
  b.Set("libtorch", "build_config", "PyTorch built with:\n  - GCC 13.1\n");
  EXPECT_EQ(DescribeEnvDifference(DiffEnvFingerprints(a, b).differences[0]),
            "[possible] libtorch.build_config: line 2: '  - GCC 12.2' vs '  - "
            "GCC 13.1'");
  std::string flags(200, 'x');
  a.Set("cpu", "features", "fma avx2 " + flags);
  b.Set("cpu", "features", "fma avx512f " + flags);
  EnvDiff d = DiffEnvFingerprints(a, b);
  ASSERT_EQ(d.differences.size(), 2u);
  EXPECT_EQ(DescribeEnvDifference(d.differences[1]),
            "[unlikely] cpu.features: only in a: avx2; only in b: avx512f");
}

TEST(EnvDiffTest, UnknownSectionsRankAsPossible) {
  EXPECT_EQ(EnvFieldImpact("future", "x"), EnvImpact::kPossible);
  EXPECT_EQ(EnvFieldImpact("env", "HCCL_DETERMINISTIC"), EnvImpact::kLikely);
  EXPECT_EQ(EnvFieldImpact("env", "INF_NAN_MODE_ENABLE"), EnvImpact::kLikely);
  EXPECT_EQ(EnvFieldImpact("env", "MKL_NUM_THREADS"), EnvImpact::kPossible);
  EXPECT_EQ(EnvFieldImpact("host", "time"), EnvImpact::kNone);
}

// A dump root with env.json at the root, and a rank dir two levels down.
class RunEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // One dir per test: ctest runs the cases of a file in parallel.
    root_ = ::testing::TempDir() + "run_env_test_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
    for (const char* run : {"a", "b"}) {
      std::string rank = root_ + "/" + run + "/step0/rank0";
      ASSERT_TRUE(CreateDirs(rank).ok());
      ASSERT_TRUE(WriteFileAtomic(rank + "/dump.json",
                                  R"({"task": "statistics", "data": {}})")
                      .ok());
    }
  }
  void TearDown() override { fs::remove_all(root_); }
  void WriteEnv(const std::string& dir, const EnvFingerprint& fp) {
    ASSERT_TRUE(WriteEnvFingerprintFile(dir + "/env.json", fp).ok());
  }
  std::string root_;
};

TEST_F(RunEnvTest, FindsEnvJsonAtTheRootFromARankDirOrAFile) {
  EXPECT_EQ(FindEnvFingerprint(root_ + "/a"), "");
  WriteEnv(root_ + "/a", Base());
  std::string want = fs::path(root_ + "/a/env.json").lexically_normal();
  EXPECT_EQ(FindEnvFingerprint(root_ + "/a"), want);
  EXPECT_EQ(FindEnvFingerprint(root_ + "/a/step0/rank0"), want);
  EXPECT_EQ(FindEnvFingerprint(root_ + "/a/step0/rank0/dump.json"), want);
}

TEST_F(RunEnvTest, FindsEnvJsonInADiscoveredRankDir) {
  WriteEnv(root_ + "/b/step0/rank0", Base());
  EXPECT_EQ(fs::path(FindEnvFingerprint(root_ + "/b")).lexically_normal(),
            fs::path(root_ + "/b/step0/rank0/env.json").lexically_normal());
}

TEST_F(RunEnvTest, WarnsWithTopDifferencesOnlyWhenRelevant) {
  WriteEnv(root_ + "/a", Base());
  EnvFingerprint b = Base();
  b.Set("host", "hostname", "beta");
  WriteEnv(root_ + "/b", b);
  EXPECT_TRUE(RunEnvWarnings(root_ + "/a", root_ + "/b").empty());
  b.Set("seed", "torch", "8");
  b.Set("threads", "intra_op", "1");
  WriteEnv(root_ + "/b", b);
  std::vector<std::string> w = RunEnvWarnings(root_ + "/a", root_ + "/b");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_NE(w[0].find("2 difference(s)"), std::string::npos) << w[0];
  EXPECT_EQ(w[1], "  [likely] seed.torch: 7 vs 8");
  EXPECT_EQ(w[2], "  [possible] threads.intra_op: 2 vs 1");
  EXPECT_EQ(RunEnvWarnings(root_ + "/a", root_ + "/b", 1).size(), 2u);
  b.Set("seed", "philox", "8");
  b.Set("seed", "other", "8");
  b.Set("determinism", "cudnn_benchmark", "true");
  WriteEnv(root_ + "/b", b);
  w = RunEnvWarnings(root_ + "/a", root_ + "/b");
  ASSERT_EQ(w.size(), 5u);  // header + 2 seeds + determinism + threads
  EXPECT_NE(w[0].find("5 difference(s)"), std::string::npos) << w[0];
  EXPECT_EQ(w[3], "  [likely] determinism.cudnn_benchmark: (absent) vs true");
}

TEST_F(RunEnvTest, CorruptEnvJsonGivesOneWarningNotAnError) {
  WriteEnv(root_ + "/a", Base());
  ASSERT_TRUE(WriteFileAtomic(root_ + "/b/env.json", "{").ok());
  std::vector<std::string> w = RunEnvWarnings(root_ + "/a", root_ + "/b");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("environment check skipped"), std::string::npos);
  EXPECT_NE(w[0].find("b/env.json"), std::string::npos);
}

TEST(EnvDiffTest, DiffIsLinearInTheNumberOfKeys) {
  // 200,000 environment variables (written as a file, read back): with the
  // former pairwise search this took minutes (40,000 keys: 20 s); a hash
  // index makes it a fraction of a second, well inside the test's timeout.
  std::string text = "{\"lockstep_env\": 1, \"env\": {";
  for (int i = 0; i < 200000; ++i) {
    text += (i ? ", " : "") + std::string("\"K") + std::to_string(i) +
            "\": \"v" + std::to_string(i) + "\"";
  }
  text += "}}";
  StatusOr<EnvFingerprint> a = DecodeEnvFingerprint(text, "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->fields.size(), 200000u);
  EnvFingerprint b = *a;
  b.fields[123456].value = "changed";
  b.fields.push_back(EnvField{"env", "ONLY_B", "1"});
  EnvDiff d = DiffEnvFingerprints(*a, b);
  ASSERT_EQ(d.differences.size(), 2u);
  EXPECT_EQ(d.differences[0].key, "env.K123456");
  EXPECT_EQ(d.differences[1].key, "env.ONLY_B");
  // Encoding keeps every field, in order.
  StatusOr<EnvFingerprint> again =
      DecodeEnvFingerprint(EncodeEnvFingerprint(b), "b");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->fields, b.fields);
}

}  // namespace
}  // namespace lockstep
