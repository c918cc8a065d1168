// Corrupt dump.json files: every one gives a Corruption status naming the
// file and the place, and none crashes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"

namespace lockstep {
namespace {

const std::string kToyDump = std::string(LOCKSTEP_FIXTURES_DIR) +
                             "/msprobe/toy/dumpA/out/step0/proc16954/dump.json";
const std::string kQuickStart = std::string(LOCKSTEP_FIXTURES_DIR) +
                                "/msprobe/quick_start/step0/proc2016/dump.json";

std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : "";
}

// The streaming reader (what compare uses) must fail alike.
Status StreamedError(std::string_view text, const std::string& path) {
  size_t seen = 0;
  auto d = ReadDumpJsonStreamingFromString(text, path,
                                           [&seen](DumpEntry, size_t index) {
                                             EXPECT_EQ(index, seen++);
                                             return Status::Ok();
                                           });
  return d.ok() ? Status::Ok() : d.status();
}

std::string ErrorOf(std::string_view text) {
  auto d = ReadDumpJsonFromString(text, "run/rank0/dump.json");
  EXPECT_FALSE(d.ok()) << text.substr(0, 200);
  if (d.ok()) return "";
  EXPECT_EQ(d.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(d.status().message().rfind("run/rank0/dump.json: ", 0), 0u)
      << d.status().message();
  EXPECT_EQ(StreamedError(text, "run/rank0/dump.json").message(),
            d.status().message());
  return d.status().message();
}

// msprobe killed while rewriting dump.json: every prefix fails and says it
// is truncated, except a prefix that is the whole document minus nothing.
TEST(DumpCorruptionTest, EveryTruncationOfTheToyDumpIsReported) {
  std::string text = Slurp(kToyDump);
  size_t end = text.find_last_of('}');
  ASSERT_NE(end, std::string::npos) << "cannot read " << kToyDump;
  for (size_t n = 0; n <= end; ++n) {
    std::string msg = ErrorOf(std::string_view(text).substr(0, n));
    bool says = msg.find("truncated at line") != std::string::npos ||
                msg.find("empty: no JSON value") != std::string::npos;
    ASSERT_TRUE(says) << n << ": " << msg;
  }
}

TEST(DumpCorruptionTest, TruncationNamesTheEntryAndCountsTheCompleteOnes) {
  std::string text = Slurp(kQuickStart);
  size_t cut = text.find("\"Functional.relu.0.forward\"");
  ASSERT_NE(cut, std::string::npos);
  cut = text.find("\"Max\"", cut) + 3;
  std::string msg = ErrorOf(std::string_view(text).substr(0, cut));
  EXPECT_NE(msg.find("truncated at line"), std::string::npos) << msg;
  EXPECT_NE(
      msg.find("inside ['data']['Functional.relu.0.forward']['input_args'][0]"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("['data'] has 5 complete members before it"),
            std::string::npos)
      << msg;
}

TEST(DumpCorruptionTest, QuickStartTruncatedAtManyPoints) {
  std::string text = Slurp(kQuickStart);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300; ++i) {
    size_t n = rng() % (text.size() - 2);
    std::string msg = ErrorOf(std::string_view(text).substr(0, n));
    ASSERT_NE(msg.find("truncated at line"), std::string::npos)
        << n << ": " << msg;
  }
}

TEST(DumpCorruptionTest, SyntaxErrorsGiveLineAndColumn) {
  std::string text = Slurp(kToyDump);
  // "requires_grad": false  ->  "requires_grad": fals, (the column is where
  // the value goes wrong, the ',' after "fals")
  size_t at = text.find("false");
  std::string bad = text.substr(0, at) + "fals" + text.substr(at + 5);
  std::string msg = ErrorOf(bad);
  EXPECT_NE(msg.find("run/rank0/dump.json: line 20 column 27 (char "),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Invalid value"), std::string::npos) << msg;
  EXPECT_NE(
      msg.find("inside ['data']['Functional.linear.0.forward']['input_args'][0]"
               "['requires_grad']"),
      std::string::npos)
      << msg;
  // A missing comma between entries.
  at = text.find("\n  \"Module.linear.Linear.forward.0\"");
  bad = text.substr(0, at - 1) + text.substr(at);
  msg = ErrorOf(bad);
  EXPECT_NE(msg.find("Missing a comma or '}' after an object member"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("after the member 'Functional.linear.0.forward'"),
            std::string::npos)
      << msg;
}

TEST(DumpCorruptionTest, WrongTypes) {
  EXPECT_NE(ErrorOf("[]").find("the top level is a list, expected a dict"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"task\": \"tensor\"}").find("no \"data\" key"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"data\": [1, 2]}")
                .find("\"data\" is a list, expected a dict of entries"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"data\": {\"Functional.linear.0.forward\": [1]}}")
                .find("entry 'Functional.linear.0.forward': expected a dict, "
                      "got a list"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"data\": {\"a\": {}, \"b\": null}}")
                .find("entry 'b': expected a dict, got None"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"task\": 3, \"data\": {}}")
                .find("\"task\" is an int, expected a str"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{\"framework\": [], \"data\": {}}")
                .find("\"framework\" is a list"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("{\"dump_data_dir\": 1.5, \"data\": {}}").find("is a float"),
      std::string::npos);
}

TEST(DumpCorruptionTest, RandomByteDamageNeverCrashes) {
  std::string text = Slurp(kToyDump);
  std::mt19937_64 rng(11);
  int ok = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bad = text;
    for (int k = 0; k < 3; ++k)
      bad[rng() % bad.size()] = static_cast<char>(rng());
    auto d = ReadDumpJsonFromString(bad, "dump.json");
    ok += d.ok();
    Status streamed = StreamedError(bad, "dump.json");
    if (!d.ok()) {
      ASSERT_EQ(d.status().code(), StatusCode::kCorruption);
      // Both fail; an entry that is not a dict may be met before a later
      // syntax error by the stream.
      ASSERT_FALSE(streamed.ok()) << d.status().ToString();
      ASSERT_TRUE(streamed.code() == StatusCode::kCorruption ||
                  streamed.code() == StatusCode::kNotSupported)
          << streamed.ToString();
    } else {
      // Damage can repeat an entry name: the stream then asks for a tree.
      ASSERT_TRUE(streamed.ok() || streamed.code() == StatusCode::kNotSupported)
          << streamed.ToString();
    }
  }
  EXPECT_LT(ok, 3000);
}

}  // namespace
}  // namespace lockstep
