// `lockstep compare` of two checkpoints, run as a user runs it: exit status,
// verdict line, the CSV's rows, summary.json and report.html.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/run_lockstep.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::RunLockstep;

const std::string kDir =
    std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/checkpoint/";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of the one compare_result_*.csv in `dir`.
std::vector<std::string> CsvLines(const std::string& dir) {
  std::vector<std::string> lines;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.rfind("compare_result_", 0) != 0 || e.path().extension() != ".csv")
      continue;
    std::istringstream in(Slurp(e.path()));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  return lines;
}

// The CSV line whose first cell is `name`.
std::string LineOf(const std::vector<std::string>& lines,
                   const std::string& name) {
  for (const std::string& l : lines) {
    if (l.rfind(name + ",", 0) == 0) return l;
  }
  return "";
}

class CheckpointCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = ::testing::TempDir() + "ckpt_cli_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(out_);
  }
  void TearDown() override { fs::remove_all(out_); }
  std::string out_;
};

TEST_F(CheckpointCliTest, ChangedStateDictFailsWithRowsPerParameter) {
  auto r = RunLockstep("compare " + kDir + "b.pt " + kDir + "a.pt -o " + out_);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL: the target lacks 1 name of the baseline "
                       "(half_p); largest error at fc.bias: shape"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("LARGEST ERROR: fc.bias error"), std::string::npos)
      << r.out;
  std::vector<std::string> lines = CsvLines(out_);
  ASSERT_EQ(lines.size(), 1u + 13u) << "header and b.pt's 13 names";
  EXPECT_EQ(lines[0].rfind("NPU Name,Bench Name,NPU Dtype", 0), 0u);
  std::string embed = LineOf(lines, "embed.weight");
  EXPECT_NE(embed.find("embed.weight,embed.weight,torch.float32,torch.float32,"
                       "\"[10, 4]\",\"[10, 4]\""),
            std::string::npos)
      << embed;
  EXPECT_NE(embed.find(",1.0,0.0,0.0,0.0,1.0,1.0,"), std::string::npos)
      << embed;
  EXPECT_NE(LineOf(lines, "fc.bias").find("shape unmatched"),
            std::string::npos);
  EXPECT_NE(LineOf(lines, "new_p").find("new_p,N/A,"), std::string::npos);
  EXPECT_EQ(LineOf(lines, "half_p"), "");  // baseline only: not a row
  std::string summary = Slurp(out_ + "/summary.json");
  EXPECT_NE(summary.find("\"subject\":\"checkpoints\""), std::string::npos);
  EXPECT_NE(summary.find("\"largest_errors\":[{\"row_index\""),
            std::string::npos)
      << summary.substr(0, 2000);
  std::string html = Slurp(out_ + "/report.html");
  EXPECT_NE(html.find("Largest errors"), std::string::npos);
  EXPECT_NE(html.find("In the baseline only"), std::string::npos);
  EXPECT_EQ(html.find("id=\"first-divergence\""), std::string::npos);
}

TEST_F(CheckpointCliTest, SameCheckpointPasses) {
  auto r = RunLockstep("compare " + kDir + "nested.pt " + kDir +
                       "nested.pt -o " + out_ + " --xlsx");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS: "), std::string::npos) << r.out;
  std::vector<std::string> lines = CsvLines(out_);
  EXPECT_NE(
      LineOf(lines, "optimizer.param_groups.0.lr").find("<class 'float'>"),
      std::string::npos);
  EXPECT_NE(LineOf(lines, "optimizer.state.2.exp_avg").find(",pass,"),
            std::string::npos);
  int xlsx = 0;
  for (const auto& e : fs::directory_iterator(out_))
    xlsx += e.path().extension() == ".xlsx" && fs::file_size(e.path()) > 0;
  EXPECT_EQ(xlsx, 1);  // the setup installs libxlsxwriter
}

TEST_F(CheckpointCliTest, SafetensorsAgainstTorchSaveByContent) {
  // The same 2-element float32 tensor in both formats, under names that say
  // nothing about the format.
  fs::create_directories(out_ + "_in");
  std::string header =
      "{\"tensor\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": "
      "[0, 8]}}";
  while (header.size() % 8) header += ' ';
  std::string st(8, '\0');
  st[0] = static_cast<char>(header.size());
  float v[2] = {0.5f, -1.0f};
  st += header + std::string(reinterpret_cast<char*>(v), 8);
  std::ofstream(out_ + "_in/w1", std::ios::binary) << st;
  auto r =
      RunLockstep("compare " + out_ + "_in/w1 " + out_ + "_in/w1 -o " + out_);
  EXPECT_EQ(r.code, 0) << r.out;
  // A checkpoint against a dump: the dump is not a checkpoint (usage error).
  r = RunLockstep("compare " + out_ + "_in/w1 " + LOCKSTEP_SOURCE_DIR +
                  "/examples/msprobe_toy/baseline -o " + out_);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("not a checkpoint"), std::string::npos) << r.out;
  // A truncated safetensors file: told by its content, refused precisely.
  std::ofstream(out_ + "_in/w2", std::ios::binary) << st.substr(0, 20);
  r = RunLockstep("compare " + out_ + "_in/w1 " + out_ + "_in/w2 -o " + out_);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("w2: header length"), std::string::npos) << r.out;
  fs::remove_all(out_ + "_in");
}

// A safetensors file with one F32 tensor per (name, value): {v, v}.
std::string Safetensors(
    const std::vector<std::pair<std::string, float>>& tensors) {
  std::string header = "{", data;
  for (const auto& [name, v] : tensors) {
    if (!data.empty()) header += ", ";
    header += "\"" + name + "\": {\"dtype\": \"F32\", \"shape\": [2], " +
              "\"data_offsets\": [" + std::to_string(data.size()) + ", " +
              std::to_string(data.size() + 8) + "]}";
    float pair[2] = {v, v};
    data += std::string(reinterpret_cast<char*>(pair), 8);
  }
  header += "}";
  std::string out(8, '\0');
  out[0] = static_cast<char>(header.size());
  return out + header + data;
}

TEST_F(CheckpointCliTest, ShardDirectoryAgainstOneFile) {
  std::string in = out_ + "_in";
  fs::create_directories(in + "/shards");
  std::ofstream(in + "/shards/model-00001-of-00002.safetensors",
                std::ios::binary)
      << Safetensors({{"a", 1}});
  std::ofstream(in + "/shards/model-00002-of-00002.safetensors",
                std::ios::binary)
      << Safetensors({{"b", 2}, {"c", 3}});
  std::ofstream(in + "/one.safetensors", std::ios::binary)
      << Safetensors({{"a", 1}, {"b", 2}, {"c", 3.5f}});
  auto r = RunLockstep("compare " + in + "/shards " + in +
                       "/one.safetensors -o " + out_);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("largest error at c: "), std::string::npos) << r.out;
  std::vector<std::string> lines = CsvLines(out_);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(LineOf(lines, "b").find(",pass,"), std::string::npos);
  fs::remove_all(in);
}

TEST_F(CheckpointCliTest, LegacyFormatIsAClearError) {
  std::string legacy =
      std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/pt/legacy.pt";
  auto r = RunLockstep("compare " + legacy + " " + legacy + " -o " + out_);
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("legacy torch.save format"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Aborted"), std::string::npos) << r.out;
}

TEST_F(CheckpointCliTest, DumpOptionsAreRefused) {
  auto r = RunLockstep("compare " + kDir + "a.pt " + kDir +
                       "a.pt --mode statistics -o " + out_);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("checkpoints are compared tensor by tensor"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace lockstep
