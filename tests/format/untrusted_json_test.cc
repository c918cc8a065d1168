// Hostile dump.json text (issue 32): one 1 GiB string took 16.8 GB and then
// aborted. A string past ReadLimits::string_bytes, or text with more values
// than ReadLimits::objects, is a short NotSupported error from every reader
// (tree, streaming and fast), found before the string is copied whole.
#include <gtest/gtest.h>

#include <string>

#include "lockstep/format/dump_reader.h"
#include "lockstep/format/json_reader.h"
#include "testing/bounded_run.h"

namespace lockstep {
namespace {

using testing::BoundedRun;
using testing::RunBounded;

constexpr uint64_t kMiB = uint64_t{1} << 20;

// A dump.json whose one entry holds a str argument of `n` bytes.
std::string DumpWithString(size_t n) {
  return R"({"task": "statistics", "level": "L1", "data": {"Torch.to.0.forward": )"
         R"({"input_args": [{"type": "str", "value": ")" +
         std::string(n, 's') + R"("}], "output": []}}})";
}

// Reads `text` with all three dump readers; each must fail with
// NotSupported, a short message that names the file, and `part`.
void ExpectAllReadersRefuse(const std::string& text, const std::string& part) {
  std::vector<Status> errors;
  errors.push_back(ReadDumpJsonFromString(text, "r/dump.json").status());
  errors.push_back(
      ReadDumpJsonStreamingFromString(
          text, "r/dump.json", [](DumpEntry, size_t) { return Status::Ok(); })
          .status());
  auto fast = ParseJsonMembersFast(
      text, "data",
      [](std::string_view, JsonNode, size_t) { return Status::Ok(); });
  ASSERT_TRUE(fast.ok());
  EXPECT_FALSE(fast->decided);  // the general reader says why
  for (const Status& s : errors) {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kNotSupported) << s.ToString();
    EXPECT_LT(s.message().size(), 600u) << s.message().substr(0, 600);
    EXPECT_EQ(s.message().rfind("r/dump.json: line 1 column ", 0), 0u)
        << s.message();
    EXPECT_NE(s.message().find(part), std::string::npos) << s.message();
  }
}

TEST(UntrustedJsonTest, StringPastTheLimitIsRefused) {
  // 20 MiB: within rapidjson's bounded stack, refused by the handler.
  ExpectAllReadersRefuse(DumpWithString(20 * kMiB),
                         "a string of 20 MiB, longer than 16 MiB");
}

TEST(UntrustedJsonTest, OneGiBStringInDumpJson) {
  // Far past the limit: refused while rapidjson copies it, at 32 MiB. The
  // issue's 1 GiB string scaled to 96 MiB; memory stays near the text's
  // size where it was 16 times it.
  std::string text = DumpWithString(96 * kMiB);
  BoundedRun r = RunBounded(uint64_t{1} << 30, [&](auto say) {
    Status s = ReadDumpJsonFromString(text, "r/dump.json").status();
    say(s.message());
    return s.code() == StatusCode::kNotSupported ? 0 : 1;
  });
  ASSERT_TRUE(r.exited) << "signal " << r.signal;
  EXPECT_EQ(r.code, 0) << r.line.substr(0, 300);
  EXPECT_LT(r.line.size(), 600u);
  EXPECT_NE(r.line.find("a string or number of more than 32 MiB"),
            std::string::npos)
      << r.line;
  EXPECT_LT(r.peak_rss_bytes,
            text.size() + 128 * kMiB + testing::SanitizerRssBytes());
  ExpectAllReadersRefuse(text, "longer than 16 MiB");
}

TEST(UntrustedJsonTest, NumberAndKeyPastTheLimitAreRefused) {
  ReadLimits limits;
  limits.string_bytes = 1000;
  std::string digits = "[0." + std::string(1500, '7') + "]";
  auto v = ParsePyJson(digits, "x.json", limits);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kNotSupported);
  std::string key = "{\"" + std::string(1500, 'k') + "\": 1}";
  v = ParsePyJson(key, "x.json", limits);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("a string of 1.5 KiB"), std::string::npos)
      << v.status().message();
  // At the limit, all read.
  EXPECT_TRUE(
      ParsePyJson("\"" + std::string(1000, 'a') + "\"", "x.json", limits).ok());
}

TEST(UntrustedJsonTest, MoreValuesThanTheObjectBudget) {
  ReadLimits limits;
  limits.objects = 1000;
  std::string list = "[";
  for (int i = 0; i < 2000; ++i) list += i ? ",0" : "0";
  list += "]";
  auto v = ParsePyJson(list, "x.json", limits);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(v.status().message().find("more than 1000 values in one file"),
            std::string::npos)
      << v.status().message();
  std::string dump = R"({"data": {"a": {"x": )" + list + "}}}";
  auto fast = ParseJsonMembersFast(
      dump, "data",
      [](std::string_view, JsonNode, size_t) { return Status::Ok(); }, limits);
  ASSERT_TRUE(fast.ok());
  EXPECT_FALSE(fast->decided);
  limits.objects = 2001;  // the list and its items
  EXPECT_TRUE(ParsePyJson(list, "x.json", limits).ok());
}

}  // namespace
}  // namespace lockstep
