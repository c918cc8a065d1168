// `lockstep replay` as a user runs it, on dumps nobody wrote for it:
// LeNet with the example's faults (bin/lenet), msprobe's own tensor dumps of
// a small transformer (tests/data/msprobe_transformer, one with a matmul
// rounded through bf16) and of a linear model (shared fixtures), and
// inputs that must be refused. Skipped where lockstep was built without
// LibTorch (no replay command).
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lockstep/format/npy.h"
#include "lockstep/report/csv.h"
#include "testing/run_lockstep.h"

namespace {

namespace fs = std::filesystem;
using lockstep::testing::CmdRun;
using lockstep::testing::RunBinary;
using lockstep::testing::RunLockstep;

const std::string kData = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data";
const std::string kFix = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReplayCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RunLockstep("--help").out.find("  replay ") == std::string::npos) {
      GTEST_SKIP() << "built without LibTorch";
    }
    dir_ = fs::temp_directory_path() /
           ("lockstep_replay_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One LeNet step in tensor mode with `args`; returns the dump dir.
  std::string Lenet(const std::string& name, const std::string& args) {
    std::string dump = (dir_ / name).string();
    CmdRun r = RunBinary("lenet", "--steps 1 --seed 1 --task tensor --dump " +
                                      dump + " " + args);
    EXPECT_EQ(r.code, 0) << r.out;
    return dump;
  }
  CmdRun Replay(const std::string& dump, const std::string& out,
                const std::string& extra = "") {
    return RunLockstep("replay " + dump + " -o " + (dir_ / out).string() + " " +
                       extra);
  }
  rapidjson::Document Summary(const std::string& out) {
    rapidjson::Document d;
    d.Parse(ReadAll((dir_ / out / "summary.json").string()).c_str());
    EXPECT_FALSE(d.HasParseError());
    return d;
  }
  // replay.csv as rows of column -> cell.
  std::vector<std::map<std::string, std::string>> Csv(const std::string& out) {
    auto rows =
        lockstep::ParseCsv(ReadAll((dir_ / out / "replay.csv").string()));
    std::vector<std::map<std::string, std::string>> result;
    for (size_t i = 1; i < rows.size(); ++i) {
      std::map<std::string, std::string> m;
      for (size_t j = 0; j < rows[0].size() && j < rows[i].size(); ++j) {
        m[rows[0][j]] = rows[i][j];
      }
      result.push_back(m);
    }
    return result;
  }
  // Every entry is replayed or says why not (or is a module, skipped).
  void ExpectEveryEntryAccounted(const std::string& out) {
    rapidjson::Document d = Summary(out);
    const auto& n = d["counts"];
    EXPECT_EQ(n["entries"].GetUint64(), n["replayed"].GetUint64() +
                                            n["not_replayable"].GetUint64() +
                                            n["skipped"].GetUint64());
    for (const auto& row : Csv(out)) {
      if (row.at("Verdict") == "not replayable" ||
          row.at("Verdict") == "skipped") {
        EXPECT_FALSE(row.at("Reason").empty()) << row.at("Entry");
      }
    }
  }

  fs::path dir_;
};

TEST_F(ReplayCliTest, LenetConvInBf16IsTheFirstSuspect) {
  std::string dump = Lenet("conv", "--fault conv2-bf16");
  CmdRun r = Replay(dump, "out");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("first suspect: Functional.conv2d.1.forward"),
            std::string::npos)
      << r.out;
  rapidjson::Document d = Summary("out");
  EXPECT_STREQ(d["verdict"].GetString(), "suspect");
  const auto& s = d["first_suspect"];
  EXPECT_STREQ(s["entry"].GetString(), "Functional.conv2d.1.forward");
  EXPECT_STREQ(s["op"].GetString(), "aten::conv2d");
  EXPECT_GT(s["max_ulp"].GetDouble(), 100 * s["bound"].GetDouble());
  // conv2: 6 input channels x 5 x 5 + bias = 151 terms.
  EXPECT_NE(std::string(s["bound_rule"].GetString()).find("sum of 151 terms"),
            std::string::npos);
  std::string html = ReadAll((dir_ / "out" / "report.html").string());
  EXPECT_NE(html.find("class=\"verdict o-fail\">FAIL: first suspect "
                      "Functional.conv2d.1.forward output.0"),
            std::string::npos);
  EXPECT_NE(html.find("First suspect</h2><p class=\"fd-entry\"><code>"
                      "Functional.conv2d.1.forward</code>"),
            std::string::npos);
  ExpectEveryEntryAccounted("out");
}

TEST_F(ReplayCliTest, LenetFourUlpLinearIsWithinItsStatedBound) {
  std::string dump = Lenet("ulp", "--fault fc2-ulp");
  CmdRun r = Replay(dump, "out");
  EXPECT_EQ(r.code, 0) << r.out;
  bool seen = false;
  for (const auto& row : Csv("out")) {
    if (row.at("Entry") != "Functional.linear.1.forward") continue;
    seen = true;
    // 4 ulp of the result is at most 4 ulp of the sum of |terms|: within
    // the 121-term bound, which the report states.
    EXPECT_LE(std::stod(row.at("Max ULP")), 4.5);
    EXPECT_EQ(row.at("Bound"), "122");
    EXPECT_NE(row.at("Bound Rule").find("sum of 121 terms"), std::string::npos);
  }
  EXPECT_TRUE(seen);
}

TEST_F(ReplayCliTest, CleanFp32AndWholeModelBf16HaveNoSuspect) {
  for (const char* dtype : {"fp32", "bf16"}) {
    std::string dump = Lenet(dtype, std::string("--dtype ") + dtype);
    CmdRun r = Replay(dump, std::string("out_") + dtype);
    EXPECT_EQ(r.code, 0) << dtype << "\n" << r.out;
    EXPECT_NE(r.out.find("no suspect"), std::string::npos) << r.out;
    rapidjson::Document d = Summary(std::string("out_") + dtype);
    EXPECT_TRUE(d["first_suspect"].IsNull());
    // Every operator call but Tensor.item (a Python number) is replayed.
    EXPECT_EQ(d["counts"]["not_replayable"].GetUint64(), 1u) << dtype;
    EXPECT_STREQ(d["not_replayable"][0]["entry"].GetString(),
                 "Tensor.item.0.forward");
  }
}

// The probe's shadow task checks each call as LeNet trains (no tensors
// saved); replay reads its records and names the same first suspect.
TEST_F(ReplayCliTest, LenetShadowDumpNamesTheConvInBf16) {
  for (const char* fault : {"conv2-bf16", "none"}) {
    SCOPED_TRACE(fault);
    std::string dump = (dir_ / (std::string("shadow_") + fault)).string();
    CmdRun run = RunBinary("lenet", "--steps 1 --seed 1 --task shadow --dump " +
                                        dump + " --fault " + fault);
    ASSERT_EQ(run.code, 0) << run.out;
    EXPECT_FALSE(fs::exists(dump + "/step0/rank0/dump_tensor_data"));
    std::string out = std::string("out_") + fault;
    CmdRun r = Replay(dump, out);
    rapidjson::Document d = Summary(out);
    if (std::string(fault) == "none") {
      EXPECT_EQ(r.code, 0) << r.out;
      EXPECT_TRUE(d["first_suspect"].IsNull());
    } else {
      EXPECT_EQ(r.code, 1) << r.out;
      EXPECT_NE(r.out.find("first suspect: Functional.conv2d.1.forward"),
                std::string::npos)
          << r.out;
      const auto& s = d["first_suspect"];
      EXPECT_STREQ(s["op"].GetString(), "aten::conv2d");
      EXPECT_GT(s["max_ulp"].GetDouble(), 100 * s["bound"].GetDouble());
      EXPECT_NE(
          std::string(s["bound_rule"].GetString()).find("sum of 151 terms"),
          std::string::npos);
    }
    ExpectEveryEntryAccounted(out);
    // Only Tensor.item (a Python number) is not checked; backward entries
    // are skipped.
    EXPECT_EQ(d["counts"]["not_replayable"].GetUint64(), 1u);
    EXPECT_GT(d["counts"]["replayed"].GetUint64(), 10u);
  }
}

TEST_F(ReplayCliTest, MsprobeTransformerDumps) {
  std::string base = kData + "/msprobe_transformer";
  CmdRun clean = Replay(base + "/clean", "clean");
  EXPECT_EQ(clean.code, 0) << clean.out;
  ExpectEveryEntryAccounted("clean");
  rapidjson::Document d = Summary("clean");
  // Every forward call of the transformer is replayed.
  for (const auto& row : Csv("clean")) {
    if (row.at("Entry").ends_with(".forward")) {
      EXPECT_TRUE(row.at("Verdict") == "ok")
          << row.at("Entry") << ": " << row.at("Reason");
    }
  }
  CmdRun fault = Replay(base + "/fault", "fault");
  EXPECT_EQ(fault.code, 1) << fault.out;
  rapidjson::Document f = Summary("fault");
  EXPECT_STREQ(f["first_suspect"]["entry"].GetString(),
               "Tensor.__matmul__.2.forward");
  EXPECT_STREQ(f["first_suspect"]["op"].GetString(), "aten::matmul");
  EXPECT_EQ(f["counts"]["suspect"].GetUint64(), 1u);
}

// Dumps from a real GPU (tests/data/h200_tinygpt): TinyGPT's first
// matmul on an H200 with TF32 on is the first suspect; with it off,
// nothing is.
TEST_F(ReplayCliTest, H200TensorDumpsWithAndWithoutTf32) {
  std::string base = kData + "/h200_tinygpt";
  CmdRun off = Replay(base + "/tensor_fp32", "fp32");
  EXPECT_EQ(off.code, 0) << off.out;
  ExpectEveryEntryAccounted("fp32");
  EXPECT_TRUE(Summary("fp32")["first_suspect"].IsNull());
  CmdRun on = Replay(base + "/tensor_tf32", "tf32");
  EXPECT_EQ(on.code, 1) << on.out;
  ExpectEveryEntryAccounted("tf32");
  rapidjson::Document d = Summary("tf32");
  EXPECT_STREQ(d["first_suspect"]["entry"].GetString(),
               "Functional.linear.0.forward");
  EXPECT_STREQ(d["first_suspect"]["op"].GetString(), "aten::linear");
  // TF32's 10-bit mantissa: far past the bound, not at its edge.
  EXPECT_GT(d["first_suspect"]["max_ulp"].GetDouble(),
            5 * d["first_suspect"]["bound"].GetDouble());
}

TEST_F(ReplayCliTest, MsprobeSharedFixtures) {
  if (!fs::exists(kFix)) GTEST_SKIP() << "fixtures not found: " << kFix;
  CmdRun a = Replay(kFix + "/toy/dumpA/out", "a");
  EXPECT_EQ(a.code, 0) << a.out;
  ExpectEveryEntryAccounted("a");
  rapidjson::Document d = Summary("a");
  // linear's backward: msprobe records the last node of linear's parts.
  bool linear_backward = false;
  for (const auto& n : d["not_replayable"].GetArray()) {
    if (std::string(n["entry"].GetString()) == "Functional.linear.0.backward") {
      linear_backward = true;
      EXPECT_NE(std::string(n["reason"].GetString()).find("decomposes"),
                std::string::npos);
    }
  }
  EXPECT_TRUE(linear_backward);
  // A statistics dump: nothing to replay, said so, not a pass.
  CmdRun s = Replay(kFix + "/quick_start/step0", "stat");
  EXPECT_EQ(s.code, 2) << s.out;
  EXPECT_NE(s.out.find("nothing was replayed"), std::string::npos) << s.out;
  EXPECT_EQ(s.out.find("no suspect"), std::string::npos) << s.out;
  EXPECT_STREQ(Summary("stat")["verdict"].GetString(), "nothing replayed");
  ExpectEveryEntryAccounted("stat");
}

// Issue 32: a dump.json naming aten::from_file on /etc/passwd read it into
// replay.csv as floats (the "Float64" of a suspect row). Now the row says
// why it was not replayed, and holds no number from the file.
TEST_F(ReplayCliTest, FromFileOnEtcPasswdPutsNoneOfItInTheReport) {
  std::string rank = (dir_ / "dump" / "step0" / "rank0").string();
  fs::create_directories(rank + "/dump_tensor_data");
  ASSERT_TRUE(lockstep::WriteNpy(
                  rank + "/dump_tensor_data/out.npy",
                  lockstep::Tensor::FromBytes(lockstep::DType::kFloat32, {16},
                                              std::string(64, '\0')))
                  .ok());
  std::ofstream(rank + "/dump.json")
      << "{\"task\": \"tensor\", \"level\": \"L1\", \"data\": {"
         "\"Torch.from_file.0.forward\": {\"input_args\": ["
         "{\"type\": \"str\", \"value\": \"/etc/passwd\"}, "
         "{\"type\": \"bool\", \"value\": false}, "
         "{\"type\": \"int\", \"value\": 16}, "
         "{\"type\": \"torch.dtype\", \"value\": \"torch.float32\"}, "
         "null, null, null], \"input_kwargs\": {}, \"output\": ["
         "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", "
         "\"shape\": [16], \"data_name\": \"out.npy\"}], "
         "\"aten\": \"aten::from_file\"}}}";
  CmdRun r = Replay((dir_ / "dump").string(), "out");
  EXPECT_EQ(r.code, 2) << r.out;  // nothing was replayed
  EXPECT_NE(r.out.find("nothing was replayed"), std::string::npos) << r.out;
  auto rows = Csv("out");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("Op"), "aten::from_file");
  EXPECT_EQ(rows[0].at("Verdict"), "not replayable");
  EXPECT_NE(rows[0].at("Reason").find("reads or writes files"),
            std::string::npos)
      << rows[0].at("Reason");
  for (const char* number : {"Max ULP", "Recorded", "Float64"}) {
    EXPECT_TRUE(rows[0].at(number).empty() || rows[0].at(number) == "0")
        << number << ": " << rows[0].at(number);
  }
}

TEST_F(ReplayCliTest, RefusesBadInput) {
  CmdRun missing = Replay((dir_ / "nope").string(), "out");
  EXPECT_EQ(missing.code, 3) << missing.out;
  CmdRun bad = RunLockstep("replay " + kData +
                           "/msprobe_transformer/clean "
                           "--jobs 0");
  EXPECT_EQ(bad.code, 2) << bad.out;
  CmdRun out =
      RunLockstep("replay " + kData + "/msprobe_transformer/clean -o /proc/x");
  EXPECT_NE(out.code, 0);
  EXPECT_EQ(out.out.find("entries"), std::string::npos) << out.out;
  CmdRun step = Replay(kData + "/msprobe_transformer/clean", "out", "--step 7");
  EXPECT_EQ(step.code, 2) << step.out;  // a step it lacks: usage
  for (const char* limit :
       {"--max-call-memory 0", "--max-call-memory lots",
        "--max-call-seconds -1", "--max-call-seconds soon"}) {
    CmdRun l =
        RunLockstep("replay " + kData + "/msprobe_transformer/clean " + limit);
    EXPECT_EQ(l.code, 2) << limit << ": " << l.out;
  }
  CmdRun help = RunLockstep("replay --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Example:"), std::string::npos);
}

}  // namespace
