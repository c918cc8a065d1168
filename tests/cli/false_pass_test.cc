// Never a false PASS: runs that lack something the baseline has, or cannot
// be compared as asked, must not exit 0 — each case once passed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "lockstep/format/npy.h"
#include "lockstep/format/tensor.h"
#include "testing/run_lockstep.h"

namespace {

namespace fs = std::filesystem;
const std::string kToy = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy";

using lockstep::testing::CmdRun;

class FalsePassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
    dir_ = ::testing::TempDir() + "lockstep_false_pass_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() +
           "/";
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A rank dir `rel` (under dir_) holding a copy of a toy dump's dump.json.
  std::string Rank(const std::string& rel, const std::string& toy) {
    fs::path to = dir_ + rel;
    fs::create_directories(to);
    for (const auto& e : fs::recursive_directory_iterator(kToy + "/" + toy)) {
      if (e.path().filename() == "dump.json") {
        fs::copy_file(e.path(), to / "dump.json");
        break;
      }
    }
    return to.string();
  }

  CmdRun Compare(const std::string& target, const std::string& baseline,
                 const std::string& flags = "") {
    return lockstep::testing::RunLockstep("compare " + target + " " + baseline +
                                          " -o " + dir_ + "out " + flags);
  }

  std::string dir_;
};

TEST_F(FalsePassTest, OpsInTheBaselineOnlyFail) {
  // statC calls Tensor.__mul__ where statA does not: comparing statA (the
  // target) against statC leaves that entry missing from the target.
  for (const char* flags : {"", "--no-align", "--align"}) {
    CmdRun r = Compare(kToy + "/statA", kToy + "/statC", flags);
    EXPECT_EQ(r.code, 1) << flags << "\n" << r.out;
    EXPECT_NE(r.out.find("FAIL"), std::string::npos) << flags << r.out;
    // With its step: gaps of several steps do not look like duplicates.
    EXPECT_NE(r.out.find("missing from target: Tensor.__mul__.0.forward "
                         "(step 0, rank 0)"),
              std::string::npos)
        << flags << "\n"
        << r.out;
  }
}

TEST_F(FalsePassTest, EmptyDumpIsAnError) {
  std::string empty = dir_ + "empty";
  fs::create_directories(empty);
  std::ofstream(empty + "/dump.json")
      << R"({"task": "statistics", "level": "L1", "dump_data_dir": null,)"
         R"( "data": {}})";
  CmdRun r = Compare(empty, kToy + "/statA");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no entries"), std::string::npos) << r.out;
  EXPECT_EQ(Compare(kToy + "/statA", empty).code, 2);
}

TEST_F(FalsePassTest, Md5ModeWithoutCrcsIsRefused) {
  CmdRun r = Compare(kToy + "/statA", kToy + "/statA", "--mode md5");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no md5 (CRC-32) values"), std::string::npos) << r.out;
  EXPECT_EQ(Compare(kToy + "/md5A", kToy + "/md5A", "--mode md5").code, 0);
}

TEST_F(FalsePassTest, StepsMissingFromTheTargetFail) {
  Rank("t/step0/rank0", "statA");
  Rank("b/step0/rank0", "statA");
  Rank("b/step1/rank0", "statA");
  Rank("b/step2/rank0", "statA");
  CmdRun r = Compare(dir_ + "t", dir_ + "b");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL: the target lacks steps 1, 2 of the baseline"),
            std::string::npos)
      << r.out;
  // The other way round the extra steps are a warning, not a failure of
  // what was compared.
  CmdRun back = Compare(dir_ + "b", dir_ + "t");
  EXPECT_NE(back.out.find("step 1 is in the target only"), std::string::npos)
      << back.out;
}

TEST_F(FalsePassTest, RanksMissingOrUnreadableFail) {
  // A crashed 3-rank run: rank 1 never wrote its dump, rank 2's is cut.
  for (const char* r : {"0", "1", "2"})
    Rank(std::string("b/step0/rank") + r, "statA");
  Rank("t/step0/rank0", "statA");
  std::string cut = Rank("t/step0/rank2", "statA") + "/dump.json";
  fs::resize_file(cut, fs::file_size(cut) / 2);
  CmdRun r = Compare(dir_ + "t", dir_ + "b");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL: no comparison for step 0 rank 1 (not in the "
                       "target), step 0 rank 2 (unreadable)"),
            std::string::npos)
      << r.out;
  std::ifstream summary(dir_ + "out/summary.json");
  std::string json((std::istreambuf_iterator<char>(summary)), {});
  EXPECT_NE(json.find(R"("missing_ranks":[{"step":0,"rank":1,"why":"not in )"
                      R"(the target"},{"step":0,"rank":2,"why":"unreadable: )"),
            std::string::npos)
      << json;
}

TEST_F(FalsePassTest, UnfinishedLastStepIsSkippedWithAWarning) {
  // A run killed in step 1: its rank dir has no dump.json yet.
  Rank("t/step0/rank0", "statA");
  fs::create_directories(dir_ + "t/step1/rank0");
  std::ofstream(dir_ + "t/step1/rank0/stack.json") << "{}";
  Rank("b/step0/rank0", "statA");
  Rank("b/step1/rank0", "statA");
  CmdRun inspect = lockstep::testing::RunLockstep("inspect " + dir_ + "t");
  EXPECT_EQ(inspect.code, 0) << inspect.out;
  EXPECT_NE(inspect.out.find("step1/rank0 has no dump.json"), std::string::npos)
      << inspect.out;
  CmdRun overflow = lockstep::testing::RunLockstep("overflow " + dir_ + "t");
  EXPECT_EQ(overflow.code, 0) << overflow.out;
  CmdRun r = Compare(dir_ + "t", dir_ + "b");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("the target lacks step 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unfinished step"), std::string::npos) << r.out;
}

// A rank dir of a tensor dump whose one entry's output is `file`: dump.json
// says shape [4] and float32, whatever the file holds.
std::string TensorRank(const std::string& dir, const std::string& npy_bytes) {
  fs::create_directories(dir + "/dump_tensor_data");
  std::ofstream(dir + "/dump.json")
      << R"({"task": "tensor", "level": "L1", "framework": "pytorch",)"
         R"( "dump_data_dir": null, "data": {"Functional.relu.0.forward":)"
         R"( {"input_args": [], "input_kwargs": {}, "output": [{"type":)"
         R"( "torch.Tensor", "dtype": "torch.float32", "shape": [4],)"
         R"( "Max": 4.0, "Min": 1.0, "Mean": 2.5, "Norm": 5.477225575051661,)"
         R"( "requires_grad": false, "data_name":)"
         R"( "Functional.relu.0.forward.output.0.npy"}]}}})";
  std::ofstream(
      dir + "/dump_tensor_data/Functional.relu.0.forward.output.0.npy",
      std::ios::binary)
      << npy_bytes;
  return dir;
}

// A float32 .npy of `shape` ("(4,)") holding `payload`.
std::string Npy(const std::string& shape, const std::string& payload) {
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\0';
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict + payload;
}

std::string Floats1234() {
  std::string out;
  for (float f : {1.0f, 2.0f, 3.0f, 4.0f})
    out.append(reinterpret_cast<const char*>(&f), sizeof(f));
  return out;
}

// Issue 32: a 0-element target file against a 4-element baseline, with
// equal shapes in dump.json, gave "PASS: 1 rows, all pass".
TEST_F(FalsePassTest, ZeroElementTargetNpyAgainstFourElementBaselineFails) {
  std::string t = TensorRank(dir_ + "t", Npy("(0,)", ""));
  std::string b = TensorRank(dir_ + "b", Npy("(4,)", Floats1234()));
  CmdRun r = Compare(t, b);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("shape [0], but dump.json says [4]"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("a tensor file's shape differs from its dump.json"),
            std::string::npos)
      << r.out;
  std::string text;
  for (const auto& e : fs::directory_iterator(dir_ + "out")) {
    if (e.path().extension() != ".csv") continue;
    std::ifstream csv(e.path());
    text += std::string((std::istreambuf_iterator<char>(csv)), {});
  }
  // No metric is computed from the mismatched file.
  EXPECT_NE(text.find(",unsupported,unsupported,"), std::string::npos) << text;
  EXPECT_EQ(Compare(b, b).code, 0);
  // The other way round, the baseline's file is the one that differs.
  CmdRun back = Compare(b, t);
  EXPECT_EQ(back.code, 1) << back.out;
}

// Issue 32: a file of shape (0, INT64_MAX, INT64_MAX) was accepted.
TEST_F(FalsePassTest, FileOfShapeZeroInt64MaxInt64MaxFails) {
  std::string t = TensorRank(
      dir_ + "t", Npy("(0, 9223372036854775807, 9223372036854775807)", ""));
  std::string b = TensorRank(dir_ + "b", Npy("(4,)", Floats1234()));
  CmdRun r = Compare(t, b);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("is too big"), std::string::npos) << r.out;
}

}  // namespace
