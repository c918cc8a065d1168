// Runs `lockstep audit` as a user would: the table, the JSON fields, the
// exit codes (0 pass, 2 usage incl. --device cuda without CUDA, 3 I/O).
// Skipped where the binary was built without LibTorch (no audit command).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/run_lockstep.h"

namespace {

using lockstep::testing::CmdRun;

CmdRun Audit(const std::string& args) {
  return lockstep::testing::RunLockstep("audit " + args);
}

bool HaveAudit() {
  return lockstep::testing::RunLockstep("--help").out.find("  audit ") !=
         std::string::npos;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(AuditCliTest, TableVerdictAndJsonFields) {
  if (!HaveAudit()) GTEST_SKIP() << "built without LibTorch";
  std::string json = ::testing::TempDir() + "lockstep_audit.json";
  CmdRun r = Audit("--ops cos,sqrt --samples 1024 --json " + json);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\ncos        float32 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[I] PASS audit float32 on cpu: 2 ops, 0 failed"),
            std::string::npos)
      << r.out;
  rapidjson::Document d;
  d.Parse(ReadAll(json).c_str());
  ASSERT_FALSE(d.HasParseError());
  const auto& audits = d["audits"];
  ASSERT_EQ(audits.Size(), 2u);
  const auto& cos = audits[0];
  EXPECT_STREQ(cos["op"].GetString(), "cos");
  EXPECT_STREQ(cos["dtype"].GetString(), "float32");
  EXPECT_LT(cos["max_ulp"].GetDouble(), 1.0);
  EXPECT_LE(cos["mean_ulp"].GetDouble(), cos["max_ulp"].GetDouble());
  ASSERT_GT(cos["worst"].Size(), 0u);
  const auto& w = cos["worst"][0];
  EXPECT_TRUE(w["input"].IsNumber() && w["result"].IsNumber() &&
              w["reference"].IsNumber());
  EXPECT_NE(w["result"].GetDouble(), w["reference"].GetDouble());
  EXPECT_TRUE(d["pass"].GetBool());
  std::filesystem::remove(json);
}

TEST(AuditCliTest, Float16OnCpuReportsSkippedOps) {
  if (!HaveAudit()) GTEST_SKIP() << "built without LibTorch";
  CmdRun r = Audit("--ops cos,reciprocal --dtype float16");
  EXPECT_EQ(r.code, 0) << r.out;
  // reciprocal has a CPU Half kernel in LibTorch 1.13; cos does not.
  EXPECT_NE(r.out.find("\nreciprocal float16  65536 "), std::string::npos)
      << r.out;
  if (r.out.find("not implemented for Half on cpu") == std::string::npos) {
    EXPECT_NE(r.out.find("\ncos        float16  65536 "), std::string::npos);
  }
}

TEST(AuditCliTest, CudaWithoutAGpuIsAUsageError) {
  if (!HaveAudit()) GTEST_SKIP() << "built without LibTorch";
  CmdRun r = Audit("--ops cos --device cuda --samples 64");
  if (r.code == 2) {
    EXPECT_NE(r.out.find("[E] audit device 'cuda'"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("no CUDA device"), std::string::npos) << r.out;
  } else {  // a machine with a GPU runs it
    EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out;
    EXPECT_NE(r.out.find("audit float32 on cuda"), std::string::npos);
  }
}

TEST(AuditCliTest, UsageAndIoErrors) {
  if (!HaveAudit()) GTEST_SKIP() << "built without LibTorch";
  for (const char* args : {"--ops nope", "--dtype float64", "--samples 3",
                           "--device tpu", "--threads 0", "-j 0"}) {
    CmdRun r = Audit(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("[E] audit"), std::string::npos) << args << r.out;
  }
  CmdRun r = Audit("--ops exp --samples 64 --json /nonexistent/dir/a.json");
  EXPECT_EQ(r.code, 3) << r.out;
  // Refused before any operator is audited: no table was printed.
  EXPECT_NE(r.out.find("cannot write there: /nonexistent/dir"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("exp "), std::string::npos) << r.out;
  r = Audit("--ops exp --samples 64 --json /tmp");
  EXPECT_EQ(r.code, 2) << r.out;  // a usage error
  EXPECT_NE(r.out.find("is a directory"), std::string::npos) << r.out;
  EXPECT_EQ(Audit("--help").code, 0);
}

}  // namespace
