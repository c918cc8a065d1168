// Hostile dump.json files through `lockstep compare` (issue 32): one string
// of 1 GiB took 16.8 GB and aborted on an internal check; one of 256 MiB
// took 4.2 GB and wrote a 2 GB CSV. Now a string past the reader's limit
// makes its rank unreadable with a short message, and a long string within
// it is cut in every cell with a mark that says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testing/run_lockstep.h"
#include "testing/test_dir.h"

namespace {

namespace fs = std::filesystem;
using lockstep::testing::CmdRun;

class UntrustedDumpCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = lockstep::testing::FreshTestDir("lockstep_untrusted_dump_");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A statistics dump whose one entry takes a str argument `value`.
  std::string Rank(const std::string& name, const std::string& value) {
    std::string dir = dir_ + name;
    fs::create_directories(dir);
    std::ofstream(dir + "/dump.json")
        << R"({"task": "statistics", "level": "L1", "framework": "pytorch",)"
           R"( "dump_data_dir": null, "data": {"Tensor.to.0.forward": {)"
           R"("input_args": [{"type": "str", "value": ")"
        << value
        << R"("}], "input_kwargs": {}, "output": [{"type": "torch.Tensor",)"
           R"( "dtype": "torch.float32", "shape": [2], "Max": 1.0, "Min": 0.5,)"
           R"( "Mean": 0.75, "Norm": 1.118, "requires_grad": false}]}}})";
    return dir;
  }

  CmdRun Compare(const std::string& t, const std::string& b) {
    return lockstep::testing::RunLockstep("compare " + t + " " + b + " -o " +
                                          dir_ + "out");
  }

  // Every CSV the run wrote, one after another.
  std::string Csvs() {
    std::string text;
    for (const auto& e : fs::directory_iterator(dir_ + "out")) {
      if (e.path().extension() == ".csv")
        text += lockstep::testing::Slurp(e.path());
    }
    return text;
  }

  std::string dir_;
};

TEST_F(UntrustedDumpCliTest, OneGiBStringInDumpJsonIsRefusedShortly) {
  // The issue's 1 GiB scaled to 96 MiB: past the 16 MiB limit all the same.
  std::string t = Rank("t", std::string(96 << 20, 's'));
  std::string b = Rank("b", "cuda");
  CmdRun r = Compare(t, b);
  EXPECT_TRUE(r.code == 1 || r.code == 3) << r.code << r.out.substr(0, 2000);
  EXPECT_LT(r.out.size(), 4000u) << r.out.substr(0, 2000);
  EXPECT_NE(r.out.find("longer than 16 MiB"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
}

TEST_F(UntrustedDumpCliTest, StringOf256MiBScaledIsCutInEveryCell) {
  // 1 MiB on each side (different), within the reader's limit: each of the
  // eight statistics cells it fills is cut, and the CSV stays small.
  std::string t = Rank("t", std::string(1 << 20, 'a'));
  std::string b = Rank("b", std::string(1 << 20, 'b'));
  CmdRun r = Compare(t, b);
  EXPECT_EQ(r.code, 1) << r.out.substr(0, 2000);
  EXPECT_LT(r.out.size(), 8000u) << r.out.substr(0, 2000);
  std::string csv = Csvs();
  EXPECT_LT(csv.size(), 400u << 10);
  size_t marks = 0;
  for (size_t at = csv.find("...(cut from 1048576 bytes)");
       at != std::string::npos;
       at = csv.find("...(cut from 1048576 bytes)", at + 1))
    ++marks;
  EXPECT_GE(marks, 8u) << csv.substr(0, 500);
  EXPECT_LT(fs::file_size(dir_ + "out/report.html"), 2u << 20);
}

}  // namespace
