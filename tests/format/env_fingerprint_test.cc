#include "lockstep/format/env_fingerprint.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "lockstep/core/file.h"

namespace lockstep {
namespace {

EnvFingerprint Sample() {
  EnvFingerprint fp;
  fp.Set("seed", "torch", "7");
  fp.Set("determinism", "deterministic_algorithms", "true");
  fp.Set("env", "OMP_NUM_THREADS", std::nullopt);
  fp.Set("env", "CUBLAS_WORKSPACE_CONFIG", ":4096:8");
  fp.Set("libtorch", "build_config", "line one\n  - line \"two\"\n");
  fp.parameters.push_back(
      {"conv1.weight", "float32", {6, 1, 5, 5}, 0xdeadbeef});
  fp.parameters.push_back({"conv1.bias", "float32", {6}, 0x00000001});
  fp.data.push_back({"batch0", "float32", {0, 3}, 0});
  return fp;
}

TEST(EnvFingerprintTest, EncodeDecodeRoundTripKeepsEverything) {
  EnvFingerprint fp = Sample();
  std::string text = EncodeEnvFingerprint(fp);
  StatusOr<EnvFingerprint> back = DecodeEnvFingerprint(text, "env.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, fp);
  EXPECT_EQ(EncodeEnvFingerprint(*back), text);
}

TEST(EnvFingerprintTest, SectionsAreNestedObjectsAndUnsetIsNull) {
  std::string text = EncodeEnvFingerprint(Sample());
  EXPECT_EQ(text.rfind("{\n \"lockstep_env\": 1,\n \"seed\": {\n  \"torch\": "
                       "\"7\"\n },",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\"OMP_NUM_THREADS\": null"), std::string::npos);
  EXPECT_NE(text.find("\"crc32c\": \"deadbeef\""), std::string::npos);
  EXPECT_NE(text.find("\"crc32c\": \"00000001\""), std::string::npos);
}

TEST(EnvFingerprintTest, SetReplacesInPlaceAndFindUsesSectionDotName) {
  EnvFingerprint fp = Sample();
  fp.Set("seed", "torch", "8");
  ASSERT_NE(fp.Find("seed.torch"), nullptr);
  EXPECT_EQ(*fp.Find("seed.torch")->value, "8");
  EXPECT_EQ(fp.fields.front().key(), "seed.torch");
  EXPECT_EQ(fp.Find("seed.torc"), nullptr);
  EXPECT_EQ(fp.Find("seedtorch"), nullptr);
  ASSERT_NE(fp.Find("env.OMP_NUM_THREADS"), nullptr);
  EXPECT_FALSE(fp.Find("env.OMP_NUM_THREADS")->value.has_value());
}

TEST(EnvFingerprintTest, EmptyFingerprintRoundTrips) {
  StatusOr<EnvFingerprint> back =
      DecodeEnvFingerprint(EncodeEnvFingerprint({}), "env.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, EnvFingerprint{});
}

void ExpectCorrupt(std::string_view text, std::string_view message_part) {
  StatusOr<EnvFingerprint> r = DecodeEnvFingerprint(text, "x/env.json");
  ASSERT_FALSE(r.ok()) << text;
  EXPECT_NE(r.status().message().find("x/env.json"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find(message_part), std::string::npos)
      << r.status().message();
}

TEST(EnvFingerprintTest, CorruptFilesAreReportedWithThePlace) {
  ExpectCorrupt("", "empty");
  ExpectCorrupt("{\"lockstep_env\": 1,", "line 1 column");
  ExpectCorrupt("[1]", "top level is a list");
  ExpectCorrupt("{}", "not a lockstep environment fingerprint");
  ExpectCorrupt(R"({"lockstep_env": "1"})", "no integer");
  ExpectCorrupt(R"({"lockstep_env": 1, "seed": {"torch": 7}})",
                "['seed']['torch']: is an int, expected a str or null");
  ExpectCorrupt(R"({"lockstep_env": 1, "seed": [1]})",
                "['seed']: is a list, expected a dict");
  ExpectCorrupt(R"({"lockstep_env": 1, "a.b": {}})", "have no '.'");
  ExpectCorrupt(R"({"lockstep_env": 1, "": {}})", "non-empty");
  ExpectCorrupt(R"({"lockstep_env": 1, "seed": {"": "1"}})", "empty field");
  ExpectCorrupt(R"({"lockstep_env": 1, "parameters": {}})",
                "['parameters']: is a dict, expected a list");
  ExpectCorrupt(R"({"lockstep_env": 1, "data": [{"name": "x"}]})",
                "['data'][0]: expected a dict with name");
  ExpectCorrupt(R"({"lockstep_env": 1, "data": [{"name": "x", "dtype": "f",
                "shape": [-1], "crc32c": "00000000"}]})",
                "non-negative");
  ExpectCorrupt(R"({"lockstep_env": 1, "data": [{"name": "x", "dtype": "f",
                "shape": [], "crc32c": "DEADBEEF"}]})",
                "8 lowercase hex");
  ExpectCorrupt(R"({"lockstep_env": 1, "data": [{"name": "x", "dtype": "f",
                "shape": [], "crc32c": "0000000"}]})",
                "8 lowercase hex");
}

TEST(EnvFingerprintTest, TruncatedFileIsCorruptionAtEveryCut) {
  std::string text = EncodeEnvFingerprint(Sample());
  for (size_t cut = 0; cut + 2 < text.size(); ++cut) {
    StatusOr<EnvFingerprint> r =
        DecodeEnvFingerprint(text.substr(0, cut), "env.json");
    ASSERT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << cut;
  }
}

TEST(EnvFingerprintTest, NewerVersionIsNotSupportedWithANote) {
  StatusOr<EnvFingerprint> r =
      DecodeEnvFingerprint(R"({"lockstep_env": 2})", "env.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("Note:"), std::string::npos);
}

TEST(EnvFingerprintTest, UnknownSectionsAreKept) {
  StatusOr<EnvFingerprint> r = DecodeEnvFingerprint(
      R"({"future": {"x": "1"}, "lockstep_env": 1})", "env.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_NE(r->Find("future.x"), nullptr);
  EXPECT_EQ(*r->Find("future.x")->value, "1");
}

TEST(EnvFingerprintTest, FileWriteIsAtomicAndReadsBack) {
  std::string dir = ::testing::TempDir() + "env_fp_test";
  ASSERT_TRUE(CreateDirs(dir).ok());
  std::string path = dir + "/env.json";
  ASSERT_TRUE(WriteEnvFingerprintFile(path, Sample()).ok());
  StatusOr<EnvFingerprint> back = ReadEnvFingerprint(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Sample());
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename(), "env.json") << "temporary file left";
  }
  StatusOr<EnvFingerprint> missing = ReadEnvFingerprint(dir + "/none.json");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

}  // namespace
// An env.json far larger than any real one is refused before decoding
// (decoding takes about 11 times the text); links and FIFOs are not read.
TEST(EnvFingerprintTest, OversizedLinkedOrFifoEnvJsonIsRefusedUnread) {
  std::string dir = ::testing::TempDir() + "env_fp_refused";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string big = "{\"lockstep_env\": 1, \"x\": {\"y\": \"" +
                    std::string(kMaxEnvJsonBytes, 'a') + "\"}}";
  ASSERT_TRUE(WriteFileAtomic(dir + "/big.json", big).ok());
  StatusOr<EnvFingerprint> r = ReadEnvFingerprint(dir + "/big.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(r.status().message().find("limit 16 MiB"), std::string::npos)
      << r.status().ToString();
  std::filesystem::create_symlink(dir + "/big.json", dir + "/link.json");
  r = ReadEnvFingerprint(dir + "/link.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("symbolic link"), std::string::npos);
  ASSERT_EQ(::mkfifo((dir + "/fifo.json").c_str(), 0600), 0);
  r = ReadEnvFingerprint(dir + "/fifo.json");  // would block if opened
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a regular file"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace lockstep
