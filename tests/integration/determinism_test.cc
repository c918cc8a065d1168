// The determinism check of issue 6: `lenet --seed 7 --deterministic` run
// twice and dumped in md5 mode (CRC-32 of every tensor) compares with every
// row equal; changing a setting that changes the reduction order (the
// intra-op thread count) breaks it, and the compare says which setting
// differs (the environment fingerprint the probe writes).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "lockstep/core/file.h"
#include "lockstep/format/json_reader.h"
#include "testing/run_lockstep.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::RunBinary;
using testing::RunLockstep;

class DeterminismTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(std::string(LOCKSTEP_BIN_DIR) + "/lenet"))
      GTEST_SKIP() << "lenet is built only with LibTorch";
    dir_ = ::testing::TempDir() + "lockstep_determinism_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Two steps of LeNet dumped in md5 mode into dir_/name.
  void Train(const std::string& name, const std::string& extra) {
    auto r = RunBinary("lenet",
                       "--steps 2 --seed 7 --deterministic --task "
                       "md5 --dump " +
                           dir_ + "/" + name + " " + extra);
    ASSERT_EQ(r.code, 0) << r.out;
  }
  PyValue Summary(const std::string& out) {
    auto text = ReadFileToString(dir_ + "/" + out + "/summary.json");
    EXPECT_TRUE(text.ok());
    auto v = ParsePyJson(text.ok() ? *text : "{}", "summary.json");
    EXPECT_TRUE(v.ok());
    return v.ok() ? *v : PyValue();
  }
  std::string dir_;
};

TEST_F(DeterminismTest, SameSeedTwiceGivesEveryTensorBitForBit) {
  Train("a", "");
  Train("b", "");
  auto r = RunLockstep("compare " + dir_ + "/b " + dir_ + "/a -o " + dir_ +
                       "/cmp -q");
  EXPECT_EQ(r.code, 0) << r.out;
  PyValue s = Summary("cmp");
  EXPECT_EQ(s.Find("mode")->as_str(), "md5");
  int64_t rows = s.Find("rows")->as_int();
  EXPECT_GT(rows, 400);  // every tensor of two LeNet steps
  EXPECT_EQ(s.Find("pass")->as_int(), rows);
  EXPECT_EQ(s.Find("warnings")->items().size(), 0u) << r.out;
}

TEST_F(DeterminismTest, ThreadCountBreaksItAndCompareNamesTheSetting) {
  Train("two", "--threads 2");
  Train("one", "--threads 1");
  auto r = RunLockstep("compare " + dir_ + "/one " + dir_ + "/two -o " + dir_ +
                       "/cmp");
  EXPECT_EQ(r.code, 1) << r.out;
  PyValue s = Summary("cmp");
  EXPECT_GT(s.Find("error")->as_int(), 0);
  // The first difference is in a backward reduction (conv weight grads).
  EXPECT_NE(
      s.Find("first_divergence")->Find("entry")->as_str().find("backward"),
      std::string::npos);
  EXPECT_NE(r.out.find("threads.intra_op: 1 vs 2"), std::string::npos) << r.out;
}

TEST_F(DeterminismTest, ADifferentSeedIsNotEqual) {
  Train("a", "");
  auto r = RunBinary("lenet",
                     "--steps 2 --seed 8 --deterministic --task md5 "
                     "--dump " +
                         dir_ + "/c");
  ASSERT_EQ(r.code, 0) << r.out;
  r = RunLockstep("compare " + dir_ + "/c " + dir_ + "/a -o " + dir_ +
                  "/cmp -q");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("seed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lockstep
