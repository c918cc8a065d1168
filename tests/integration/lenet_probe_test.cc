// End to end with the probe: build/bin/lenet dumps a reference and a
// target run, `lockstep compare` must name the operator whose fault was
// injected as the first divergence.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "lockstep/core/file.h"
#include "lockstep/format/json_reader.h"
#include "testing/run_lockstep.h"
#include "testing/tmpfs.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::CmdRun;
using testing::RunBinary;
using testing::RunLockstep;

class LenetProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(std::string(LOCKSTEP_BIN_DIR) + "/lenet")) {
      GTEST_SKIP() << "bin/lenet not built (no LibTorch)";
    }
    dir_ = fs::temp_directory_path() /
           ("lockstep_lenet_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs lenet with `args`, dumping into dir_/`name`; returns that path.
  std::string Dump(const std::string& name, const std::string& args) {
    std::string out = (dir_ / name).string();
    CmdRun r =
        RunBinary("lenet", "--steps 2 --batch 8 " + args + " --dump " + out);
    EXPECT_EQ(r.code, 0) << r.out;
    return out;
  }
  // `lockstep compare target baseline`; parses its summary.json.
  PyValue Compare(const std::string& target, const std::string& baseline,
                  int* code) {
    std::string out = (dir_ / "cmp").string();
    fs::remove_all(out);
    CmdRun r = RunLockstep("compare " + target + " " + baseline + " -o " + out);
    *code = r.code;
    last_output_ = r.out;
    StatusOr<std::string> text = ReadFileToString(out + "/summary.json");
    EXPECT_TRUE(text.ok()) << r.out;
    if (!text.ok()) return PyValue();
    StatusOr<PyValue> v = ParsePyJson(*text, "summary.json");
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? *v : PyValue();
  }
  static std::string FirstDivergence(const PyValue& summary) {
    const PyValue* f = summary.Find("first_divergence");
    if (f == nullptr || f->is_none()) return "<none>";
    const PyValue* e = f->Find("entry");
    return e == nullptr ? "<no entry>" : e->as_str();
  }

  fs::path dir_;
  std::string last_output_;
};

TEST_F(LenetProbeTest, Conv2InBf16IsTheFirstDivergenceInStatistics) {
  std::string ref = Dump("ref", "--seed 1 --task statistics --fault none");
  std::string tgt =
      Dump("tgt", "--seed 1 --task statistics --fault conv2-bf16");
  int code = -1;
  PyValue s = Compare(tgt, ref, &code);
  EXPECT_EQ(code, 1) << last_output_;
  EXPECT_EQ(s.Find("mode")->as_str(), "statistics");
  EXPECT_EQ(FirstDivergence(s), "Functional.conv2d.1.forward") << last_output_;
}

TEST_F(LenetProbeTest, Fc2UlpErrorIsTheFirstDivergenceInMd5) {
  std::string ref = Dump("ref", "--seed 1 --task md5 --fault none");
  std::string tgt = Dump("tgt", "--seed 1 --task md5 --fault fc2-ulp");
  int code = -1;
  PyValue s = Compare(tgt, ref, &code);
  EXPECT_EQ(code, 1) << last_output_;
  EXPECT_EQ(s.Find("mode")->as_str(), "md5");
  EXPECT_EQ(FirstDivergence(s), "Functional.linear.1.forward") << last_output_;
}

TEST_F(LenetProbeTest, SameSeedTwiceGivesEqualMd5Rows) {
  std::string a = Dump("a", "--seed 3 --task md5");
  std::string b = Dump("b", "--seed 3 --task md5");
  int code = -1;
  PyValue s = Compare(a, b, &code);
  EXPECT_EQ(code, 0) << last_output_;
  ASSERT_NE(s.Find("rows"), nullptr);
  EXPECT_GT(s.Find("rows")->as_int(), 50);
  EXPECT_EQ(s.Find("pass")->as_int(), s.Find("rows")->as_int());
  EXPECT_EQ(FirstDivergence(s), "<none>");
}

TEST_F(LenetProbeTest, DifferentSeedsDiverge) {
  std::string a = Dump("a", "--seed 1 --task md5");
  std::string b = Dump("b", "--seed 2 --task md5");
  int code = -1;
  PyValue s = Compare(a, b, &code);
  EXPECT_EQ(code, 1) << last_output_;
  EXPECT_NE(FirstDivergence(s), "<none>");
  EXPECT_LT(s.Find("pass")->as_int(), s.Find("rows")->as_int());
}

TEST_F(LenetProbeTest, BadFlagsExitWithUsageError) {
  std::string bad_json = (dir_ / "bad.json").string();
  std::ofstream(bad_json) << "{\"task\": \"statistics\", \"level\": \"L7\"}";
  struct Case {
    std::string args, says;
  };
  for (const Case& c : std::vector<Case>{
           {"--dtype fp8", "--dtype"},
           {"--fault cosmic-ray", "--fault"},
           {"--task structure", "--task"},
           {"--steps 0", "--steps"},
           {"--no-such-flag", "no-such-flag"},
           {"--config " + (dir_ / "missing.json").string(), "missing.json"},
           {"--config " + bad_json + " --dump " + (dir_ / "d").string(),
            "level"}}) {
    CmdRun r = RunBinary("lenet", c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_ / "d"));
}

// Counts the "step N loss" lines lenet printed: training went on.
int LossLines(const std::string& out) {
  int n = 0;
  for (size_t at = out.find(" loss "); at != std::string::npos;
       at = out.find(" loss ", at + 1)) {
    ++n;
  }
  return n;
}

TEST_F(LenetProbeTest, UnwritableDumpPathWarnsAndTrainingFinishes) {
  std::string file = (dir_ / "a_file").string();
  std::ofstream(file) << "x";
  CmdRun r = RunBinary("lenet", "--steps 3 --batch 8 --dump " + file + "/d");
  EXPECT_EQ(r.code, 3) << r.out;  // trained; the dump is incomplete
  EXPECT_EQ(LossLines(r.out), 3) << r.out;
  EXPECT_NE(r.out.find("[W] lenet | probe not started"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(file), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the dump is incomplete"), std::string::npos) << r.out;
}

TEST_F(LenetProbeTest, FullDiskWarnsEachStepAndTrainingFinishes) {
  fs::path disk = dir_ / "disk";
  fs::create_directories(disk);
  std::string why = testing::MountTmpfs(disk.string(), "512k");
  if (!why.empty()) GTEST_SKIP() << why;
  // Tensor mode writes ~2 MB per LeNet step at batch 8: the 512 KiB disk
  // fills during step 0 and stays full.
  CmdRun r = RunBinary("lenet", "--steps 3 --batch 8 --task tensor --dump " +
                                    (disk / "d").string());
  std::vector<std::string> left_over;
  for (const auto& f : fs::recursive_directory_iterator(disk)) {
    if (f.path().string().find(".tmp.") != std::string::npos) {
      left_over.push_back(f.path().string());
    }
  }
  testing::UnmountTmpfs(disk.string());
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_EQ(LossLines(r.out), 3) << r.out;
  for (int step : {0, 1, 2}) {
    EXPECT_NE(r.out.find("[W] lenet | probe, step " + std::to_string(step)),
              std::string::npos)
        << r.out;
  }
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  // Failed writes leave no partial files behind.
  EXPECT_TRUE(left_over.empty()) << left_over.front();
}

}  // namespace
}  // namespace lockstep
