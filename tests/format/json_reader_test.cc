#include "lockstep/format/json_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace lockstep {
namespace {

PyValue Parse(std::string_view text) {
  auto v = ParsePyJson(text, "t.json");
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : PyValue();
}

std::string ErrorOf(std::string_view text) {
  auto v = ParsePyJson(text, "t.json");
  EXPECT_FALSE(v.ok()) << "parsed: " << std::string(text);
  if (v.ok()) return "";
  EXPECT_EQ(v.status().code(), StatusCode::kCorruption);
  return v.status().message();
}

TEST(JsonReaderTest, IntsAndFloatsAreToldApartAsPythonDoes) {
  PyValue v =
      Parse("[1, 1.0, -0, -0.0, 1e5, 1E-3, 2.5e+2, 9223372036854775807]");
  const auto& it = v.items();
  ASSERT_EQ(it.size(), 8u);
  EXPECT_EQ(it[0].kind(), PyValue::Kind::kInt);
  EXPECT_EQ(it[1].kind(), PyValue::Kind::kFloat);
  EXPECT_EQ(it[2].kind(), PyValue::Kind::kInt);
  EXPECT_EQ(it[2].PyStr(), "0");
  EXPECT_EQ(it[3].PyStr(), "-0.0");
  EXPECT_EQ(it[4].PyStr(), "100000.0");
  EXPECT_EQ(it[5].PyStr(), "0.001");
  EXPECT_EQ(it[6].PyStr(), "250.0");
  EXPECT_EQ(it[7].as_int(), INT64_MAX);
}

TEST(JsonReaderTest, BigIntsKeepTheirDigits) {
  PyValue v = Parse(
      "[9223372036854775808, -9223372036854775809, -9223372036854775808]");
  const auto& it = v.items();
  EXPECT_EQ(it[0].kind(), PyValue::Kind::kInt);
  EXPECT_EQ(it[0].PyStr(), "9223372036854775808");
  EXPECT_EQ(it[1].PyStr(), "-9223372036854775809");
  EXPECT_EQ(it[2].as_int(), INT64_MIN);
  EXPECT_EQ(it[2].PyStr(), "-9223372036854775808");
  std::string big(300, '7');
  EXPECT_EQ(Parse(big).PyStr(), big);
}

TEST(JsonReaderTest, FloatsAreCorrectlyRounded) {
  // Halfway and near-halfway cases where naive conversions go wrong.
  EXPECT_EQ(Parse("9007199254740993.0").as_double(), 9007199254740992.0);
  EXPECT_EQ(Parse("2.2250738585072011e-308").as_double(),
            2.2250738585072009e-308);
  EXPECT_EQ(Parse("0.1").as_double(), 0.1);
  EXPECT_EQ(Parse("1.00000000000000011102230246251565404236316680908203125")
                .as_double(),
            1.0);
  EXPECT_EQ(Parse("1.00000000000000011102230246251565404236316680908203126")
                .as_double(),
            1.0000000000000002);
  EXPECT_EQ(Parse("4.9406564584124654e-324").as_double(),
            4.9406564584124654e-324);
  // Out of range: Python's float() gives inf and 0.
  EXPECT_EQ(Parse("1.7976931348623159e308").as_double(), INFINITY);
  EXPECT_EQ(Parse("-1e-400").PyStr(), "-0.0");
  EXPECT_EQ(Parse("1e-400").PyStr(), "0.0");
}

TEST(JsonReaderTest, PythonNanAndInfinityTokens) {
  PyValue v = Parse("[NaN, Infinity, -Infinity]");
  EXPECT_TRUE(std::isnan(v.items()[0].as_double()));
  EXPECT_EQ(v.items()[0].kind(), PyValue::Kind::kFloat);
  EXPECT_EQ(v.items()[1].as_double(), INFINITY);
  EXPECT_EQ(v.items()[2].as_double(), -INFINITY);
  // rapidjson also takes these; Python's json does not.
  for (const char* bad :
       {"Inf", "-Inf", "-NaN", "NaN.5", "Infinity1", "[nan]"}) {
    EXPECT_NE(ErrorOf(bad), "") << bad;
  }
}

TEST(JsonReaderTest, DictsKeepOrderAndRepeatedKeysActLikePython) {
  PyValue v = Parse(R"({"b": 1, "a": 2, "b": 3, "c": {}})");
  ASSERT_EQ(v.fields().size(), 3u);
  EXPECT_EQ(v.fields()[0].first, "b");
  EXPECT_EQ(v.fields()[0].second.as_int(), 3);
  EXPECT_EQ(v.fields()[1].first, "a");
  EXPECT_EQ(v.fields()[2].first, "c");
  EXPECT_EQ(v.PyStr(), "{'b': 3, 'a': 2, 'c': {}}");
}

// Empty strs, lists and dicts have no heap part: their word must read as a
// null pointer wherever they are moved (clang's libFuzzer build freed a
// garbage pointer for `{"c": [1], "d": [], "c": [2]}`, whose repeated key
// moves the empty list; fixed by the union's order in pyvalue.h).
TEST(JsonReaderTest, EmptyContainersSurviveRepeatedKeys) {
  for (const char* text :
       {R"({"c": [1], "d": [], "c": [2]})", R"({"c": 1, "d": {}, "c": 2})",
        R"({"c": 1, "d": "", "c": 2, "e": [[], {}, ""]})"}) {
    PyValue v = Parse(text);
    ASSERT_EQ(v.fields().size(), v.fields().back().first == "e" ? 3u : 2u);
    EXPECT_TRUE(v.fields()[1].second.items().empty());
    EXPECT_TRUE(v.fields()[1].second.fields().empty());
    EXPECT_EQ(v.fields()[1].second.as_str(), "");
    PyValue copy = v;
    EXPECT_EQ(copy.PyStr(), v.PyStr());
  }
  PyValue list = PyValue::List({}), dict = PyValue::Dict({}),
          str = PyValue::Str("");
  EXPECT_EQ(list.PyStr(), "[]");
  EXPECT_EQ(dict.PyStr(), "{}");
  EXPECT_EQ(str.PyRepr(), "''");
}

TEST(JsonReaderTest, ManyRepeatedKeysInABigDict) {
  std::string text = "{";
  for (int i = 0; i < 3000; ++i) {
    text += "\"k" + std::to_string(i % 1000) + "\": " + std::to_string(i) + ",";
  }
  text.back() = '}';
  PyValue v = Parse(text);
  ASSERT_EQ(v.fields().size(), 1000u);
  EXPECT_EQ(v.fields()[7].first, "k7");
  EXPECT_EQ(v.fields()[7].second.as_int(), 2007);
}

TEST(JsonReaderTest, StringsAndEscapes) {
  PyValue v = Parse(
      R"(["a\"b\\c\/\n\t\u00e9\u4e2d\ud83d\ude00", "\u0000x", "caf\u00e9"])");
  EXPECT_EQ(v.items()[0].as_str(),
            "a\"b\\c/\n\t\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
  EXPECT_EQ(v.items()[1].as_str(), std::string("\0x", 2));
  EXPECT_EQ(Parse("\"\xc3\xa9\"").as_str(), "\xc3\xa9");
  // A lone low surrogate is kept WTF-8 style (Python keeps it in the str).
  EXPECT_EQ(Parse(R"("a\udc00")").as_str(), "a\xed\xb0\x80");
}

TEST(JsonReaderTest, LiteralsAndWhitespace) {
  PyValue v =
      Parse(" \n\t{\"a\": null, \"b\": true, \"c\": false, \"d\": []}\r\n ");
  EXPECT_TRUE(v.fields()[0].second.is_none());
  EXPECT_TRUE(v.fields()[1].second.as_bool());
  EXPECT_EQ(v.fields()[2].second.kind(), PyValue::Kind::kBool);
  EXPECT_EQ(v.fields()[3].second.kind(), PyValue::Kind::kList);
}

TEST(JsonReaderTest, SyntaxErrorsGiveLineAndColumn) {
  std::string msg = ErrorOf("{\n \"a\": [1,\n  2 3]\n}");
  EXPECT_NE(msg.find("t.json: line 3 column 5 (char 16)"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("inside ['a'], after the element [1]"), std::string::npos)
      << msg;
  msg = ErrorOf("{\"a\": 1,, }");
  EXPECT_NE(msg.find("line 1 column 9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("after the member 'a'"), std::string::npos) << msg;
}

TEST(JsonReaderTest, RejectsWhatPythonRejects) {
  for (const char* bad :
       {"[1,]", "{\"a\":1,}", "01", "[1] 2", "'a'", "{a: 1}", "[.5]", "[1.]",
        "[-]", "[1e]", "// c\n1", "\"\t\"", "\xef\xbb\xbf{}", "\"\\x\"",
        "\"\xff\"", "\"\xc3\"", "\"\\ud800\""}) {
    EXPECT_NE(ErrorOf(bad), "") << bad;
  }
}

TEST(JsonReaderTest, ControlCharacterAndNulAreNamed) {
  EXPECT_NE(ErrorOf("[\"a\nb\"]").find("invalid control character 0x0a"),
            std::string::npos);
  std::string with_nul("{}\0{}", 5);
  std::string msg = ErrorOf(with_nul);
  EXPECT_NE(msg.find("NUL byte"), std::string::npos) << msg;
  EXPECT_NE(msg.find("char 2"), std::string::npos) << msg;
}

TEST(JsonReaderTest, EmptyAndTruncatedText) {
  EXPECT_NE(ErrorOf("").find("empty"), std::string::npos);
  EXPECT_NE(ErrorOf(" \n ").find("empty"), std::string::npos);
  std::string msg = ErrorOf("{\"data\": {\"x\": {}, \"y\": {\"input\": [1, 2");
  EXPECT_NE(msg.find("truncated at line 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("inside ['data']['y']['input'], after the element [1]"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("['data'] has 1 complete members"), std::string::npos)
      << msg;
}

TEST(JsonReaderTest, DeepNestingIsAnErrorNotACrash) {
  std::string ok(kMaxJsonDepth, '[');
  ok += std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(ParsePyJson(ok, "t").ok());
  std::string deep(100000, '[');
  std::string msg = ErrorOf(deep);
  EXPECT_NE(msg.find("nested deeper than 512"), std::string::npos) << msg;
}

TEST(JsonReaderTest, TextPosition) {
  EXPECT_EQ(JsonTextPosition("ab\ncd", 0), "line 1 column 1 (char 0)");
  EXPECT_EQ(JsonTextPosition("ab\ncd", 3), "line 2 column 1 (char 3)");
  EXPECT_EQ(JsonTextPosition("ab\ncd", 5), "line 2 column 3 (char 5)");
  EXPECT_EQ(JsonTextPosition("ab", 99), "line 1 column 3 (char 2)");
}

}  // namespace
}  // namespace lockstep
