// `lockstep env capture|diff` and compare's environment warning, run as a
// user would. Skipped where lockstep was built without LibTorch (no `env`).
#include <gtest/gtest.h>

#include <filesystem>

#include "lockstep/core/file.h"
#include "lockstep/format/env_fingerprint.h"
#include "testing/run_lockstep.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::CmdRun;
using testing::RunLockstep;

// One statistics entry, enough for compare to find and pass.
constexpr char kDump[] =
    R"({"task": "statistics", "level": "L1", "framework": "pytorch",
 "dump_data_dir": null, "data": {"Functional.relu.0.forward": {
 "input_args": [{"type": "torch.Tensor", "dtype": "torch.float32",
 "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0,
 "requires_grad": false}], "input_kwargs": {}, "output": []}}})";

class EnvCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // env diff needs no LibTorch; env capture runs lockstep-torch.
    std::string name =
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    bool captures = name.find("Capture") != std::string::npos ||
                    name.find("Seed") != std::string::npos ||
                    name.find("UsageErrors") != std::string::npos;
    if (captures &&
        !fs::exists(std::string(LOCKSTEP_BIN_DIR) + "/lockstep-torch")) {
      GTEST_SKIP() << "built without LibTorch: no env capture";
    }
    // One dir per test: ctest runs the cases of a file in parallel.
    dir_ = ::testing::TempDir() + "env_cli_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    ASSERT_TRUE(CreateDirs(dir_).ok());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const EnvFingerprint& fp) {
    std::string p = dir_ + "/" + name;
    EXPECT_TRUE(WriteEnvFingerprintFile(p, fp).ok());
    return p;
  }
  std::string dir_;
};

TEST_F(EnvCliTest, CaptureWritesAReadableFingerprint) {
  CmdRun r = RunLockstep("env capture -o " + dir_ + "/env.json");
  ASSERT_EQ(r.code, 0) << r.out;
  StatusOr<EnvFingerprint> fp = ReadEnvFingerprint(dir_ + "/env.json");
  ASSERT_TRUE(fp.ok()) << fp.status().ToString();
  EXPECT_NE(fp->Find("libtorch.version"), nullptr);
  EXPECT_NE(fp->Find("env.CUBLAS_WORKSPACE_CONFIG"), nullptr);
  CmdRun out = RunLockstep("env capture");
  EXPECT_EQ(out.code, 0);
  EXPECT_EQ(out.out.rfind("{\n \"lockstep_env\": 1,", 0), 0u) << out.out;
}

TEST_F(EnvCliTest, CaptureChecksTheOutputPathFirst) {
  CmdRun r = RunLockstep("env capture -o /nonexistent/dir/env.json");
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("cannot write there: /nonexistent/dir"),
            std::string::npos)
      << r.out;
}

TEST_F(EnvCliTest, SameSeedsDiffZeroOtherSeedsDiffOneSeedFirst) {
  std::string a = dir_ + "/a.json", b = dir_ + "/b.json", c = dir_ + "/c.json";
  ASSERT_EQ(RunLockstep("env capture --seed 7 --deterministic -o " + a).code,
            0);
  ASSERT_EQ(RunLockstep("env capture --seed 7 --deterministic -o " + b).code,
            0);
  ASSERT_EQ(RunLockstep("env capture --seed 8 -o " + c).code, 0);
  CmdRun same = RunLockstep("env diff " + a + " " + b);
  EXPECT_EQ(same.code, 0) << same.out;
  EXPECT_NE(same.out.find("ENV SAME"), std::string::npos) << same.out;
  CmdRun differ = RunLockstep("env diff " + a + " " + c);
  EXPECT_EQ(differ.code, 1) << differ.out;
  EXPECT_NE(differ.out.find("  1. [likely] seed."), std::string::npos)
      << differ.out;
  EXPECT_NE(differ.out.find("determinism.deterministic_algorithms: true vs "
                            "false"),
            std::string::npos)
      << differ.out;
  EXPECT_NE(differ.out.find("ENV DIFFERENT"), std::string::npos);
}

TEST_F(EnvCliTest, HostnameOnlyDifferenceExitsZero) {
  EnvFingerprint a, b;
  a.Set("host", "hostname", "alpha");
  b.Set("host", "hostname", "beta");
  CmdRun r =
      RunLockstep("env diff " + Write("a.json", a) + " " + Write("b.json", b));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("[none] host.hostname: alpha vs beta"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ENV SAME: no difference that may change numbers (1 "
                       "without effect)"),
            std::string::npos)
      << r.out;
}

TEST_F(EnvCliTest, UnreadableFilesExitThreeNamingTheFile) {
  std::string a = Write("a.json", {});
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/bad.json",
                              "{\"lockstep_env\": 1, "
                              "\"seed\": {\"x\": 1}}")
                  .ok());
  CmdRun bad = RunLockstep("env diff " + a + " " + dir_ + "/bad.json");
  EXPECT_EQ(bad.code, 3);
  EXPECT_NE(bad.out.find("[E] " + dir_ + "/bad.json: ['seed']['x']"),
            std::string::npos)
      << bad.out;
  CmdRun missing = RunLockstep("env diff " + a + " " + dir_ + "/none.json");
  EXPECT_EQ(missing.code, 3);
  EXPECT_NE(missing.out.find("none.json"), std::string::npos);
}

TEST_F(EnvCliTest, UsageErrorsExitTwo) {
  EXPECT_EQ(RunLockstep("env").code, 2);
  EXPECT_EQ(RunLockstep("env frobnicate").code, 2);
  EXPECT_EQ(RunLockstep("env diff onlyone.json").code, 2);
  EXPECT_EQ(RunLockstep("env capture --deterministic").code, 2);
  EXPECT_EQ(RunLockstep("env capture --seed -1").code, 2);
  EXPECT_EQ(RunLockstep("env diff --help").code, 0);
}

TEST_F(EnvCliTest, CompareWarnsWhenTheRunsFingerprintsDiffer) {
  for (const char* run : {"a", "b"}) {
    std::string rank = dir_ + "/" + run + "/step0/rank0";
    ASSERT_TRUE(CreateDirs(rank).ok());
    ASSERT_TRUE(WriteFileAtomic(rank + "/dump.json", kDump).ok());
  }
  EnvFingerprint fa, fb;
  fa.Set("determinism", "deterministic_algorithms", "true");
  fb.Set("determinism", "deterministic_algorithms", "false");
  Write("a/env.json", fa);
  Write("b/env.json", fb);
  CmdRun r =
      RunLockstep("compare " + dir_ + "/a " + dir_ + "/b -o " + dir_ + "/out");
  EXPECT_EQ(r.code, 0) << r.out;  // a warning, not a divergence
  EXPECT_NE(r.out.find("[W] environment differs: 1 difference(s)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[W]   [likely] determinism.deterministic_algorithms: "
                       "true vs false"),
            std::string::npos)
      << r.out;
  StatusOr<std::string> summary = ReadFileToString(dir_ + "/out/summary.json");
  ASSERT_TRUE(summary.ok());
  EXPECT_NE(summary->find("environment differs"), std::string::npos);
  Write("b/env.json", fa);
  r = RunLockstep("compare " + dir_ + "/a " + dir_ + "/b -o " + dir_ + "/out");
  EXPECT_EQ(r.out.find("environment differs"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lockstep
