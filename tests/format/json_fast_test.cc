// ParseJsonMembersFast against ParsePyJson: the same values, typed the same
// way, for every member of random documents; and the cases it leaves to the
// general reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "lockstep/format/json_reader.h"

namespace lockstep {
namespace {

// A random JSON value, with what a dump holds and what it should not:
// ints (beyond int64 too), floats in every notation, NaN/Infinity, escapes
// and non-ASCII text, empty and nested containers, null.
class RandomJson {
 public:
  explicit RandomJson(uint32_t seed) : rng_(seed) {}

  std::string Value(int depth) {
    switch (rng_() % (depth > 3 ? 6 : 8)) {
      case 0:
        return "null";
      case 1:
        return rng_() % 2 ? "true" : "false";
      case 2: {
        const char* ints[] = {"0",
                              "-0",
                              "7",
                              "-42",
                              "9223372036854775807",
                              "-9223372036854775808",
                              "9223372036854775808",
                              "123456789012345678901234567890"};
        return ints[rng_() % 8];
      }
      case 3: {
        const char* floats[] = {"0.5",      "-1.25e-07", "1E5",       "3.0",
                                "NaN",      "Infinity",  "-Infinity", "1e-320",
                                "2.5E+300", "-0.0"};
        return floats[rng_() % 10];
      }
      case 4: {
        const char* strs[] = {"\"torch.float32\"", "\"\"",
                              "\"a\\\"b\\\\c\"",   "\"\\u00e9t\\u00e9\"",
                              "\"caf\xc3\xa9\"",   "\"tab\\there\""};
        return strs[rng_() % 6];
      }
      case 5:
        return "\"" + std::to_string(rng_() % 1000) + "\"";
      case 6: {
        std::string out = "[";
        for (int i = 0, n = static_cast<int>(rng_() % 4); i < n; ++i)
          out += (i ? ", " : "") + Value(depth + 1);
        return out + "]";
      }
      default:
        return Dict(depth, /*unique=*/true);
    }
  }

  // A dict; with unique == false it may repeat a key.
  std::string Dict(int depth, bool unique) {
    const char* keys[] = {"type", "dtype", "shape", "Max",      "Min", "Mean",
                          "Norm", "value", "md5",   "k\\u00e9", "a,b"};
    std::vector<int> used;
    std::string out = "{";
    for (int i = 0, n = static_cast<int>(rng_() % 5); i < n; ++i) {
      int k = static_cast<int>(rng_() % 11);
      bool seen = std::find(used.begin(), used.end(), k) != used.end();
      if (unique && seen) continue;
      used.push_back(k);
      out += std::string(out.size() > 1 ? ", " : "") + "\"" + keys[k] +
             "\": " + Value(depth + 1);
    }
    return out + "}";
  }

  uint32_t Next() { return rng_(); }

 private:
  std::mt19937 rng_;
};

struct Member {
  std::string key;
  PyValue value;
};

StatusOr<FastMembers> Fast(const std::string& text,
                           std::vector<Member>* members) {
  return ParseJsonMembersFast(
      text, "data", [&](std::string_view key, JsonNode v, size_t parsed) {
        EXPECT_LE(parsed, text.size());
        members->push_back({std::string(key), v.ToPyValue()});
        return Status::Ok();
      });
}

TEST(JsonFastTest, MembersEqualTheGeneralReadersValues) {
  RandomJson gen(17);
  int decided = 0;
  for (int doc = 0; doc < 3000; ++doc) {
    std::string text = "{\"task\": " + gen.Value(2) + ", \"data\": {";
    int n = static_cast<int>(gen.Next() % 6);
    for (int e = 0; e < n; ++e) {
      text += std::string(e ? ", " : "") + "\"E." + std::to_string(e) +
              ".forward\": " + gen.Dict(1, /*unique=*/true);
    }
    text += "}, \"level\": \"L1\"}";
    std::vector<Member> members;
    StatusOr<FastMembers> fast = Fast(text, &members);
    ASSERT_TRUE(fast.ok()) << fast.status().ToString();
    StatusOr<PyValue> whole = ParsePyJson(text, "doc");
    ASSERT_TRUE(whole.ok()) << text;
    ASSERT_TRUE(fast->decided) << text;
    ++decided;
    const PyValue* data = whole->Find("data");
    ASSERT_NE(data, nullptr);
    ASSERT_EQ(members.size(), data->fields().size()) << text;
    for (size_t i = 0; i < members.size(); ++i) {
      EXPECT_EQ(members[i].key, data->fields()[i].first);
      EXPECT_TRUE(members[i].value == data->fields()[i].second)
          << text << "\n  member " << i << ": " << members[i].value.PyRepr()
          << " vs " << data->fields()[i].second.PyRepr();
    }
    // The top level: in order, the streamed member an empty dict.
    ASSERT_EQ(fast->top.size(), 3u);
    EXPECT_EQ(fast->top[0].first, "task");
    EXPECT_TRUE(fast->top[0].second == whole->fields()[0].second) << text;
    EXPECT_EQ(fast->top[1].first, "data");
    EXPECT_TRUE(fast->top[1].second == PyValue::Dict({}));
    EXPECT_EQ(fast->top[2].first, "level");
  }
  EXPECT_EQ(decided, 3000);
}

// What only the general reader decides is left to it, whatever the sink
// was given before.
TEST(JsonFastTest, LeavesToTheGeneralReaderWhatOnlyItDecides) {
  const char* undecided[] = {
      "{\"data\": {\"A\": {\"x\": 1, \"x\": 2}}}",      // a repeated key
      "{\"data\": {\"A\": {}, \"B\": {}, \"A\": {}}}",  // a repeated entry
      "{\"data\": {\"A\": [1]}}",                       // an entry not a dict
      "{\"data\": {\"A\": 5}}",
      "{\"data\": [1, 2]}",            // data not a dict
      "{\"data\": {}, \"data\": {}}",  // data twice
      "[1, 2]",                        // not a dict
      "7",
      "{\"data\": {\"A\": {\"x\": 1}}",      // truncated
      "{\"data\": {\"A\": {\"x\": 1,}}}",    // a syntax error
      "{\"data\": {\"A\": {\"x\": -NaN}}}",  // not Python's token
      "{\"data\": {}} trailing",
      "",
  };
  for (const char* text : undecided) {
    std::vector<Member> members;
    StatusOr<FastMembers> fast = Fast(text, &members);
    ASSERT_TRUE(fast.ok()) << text;
    EXPECT_FALSE(fast->decided) << text;
  }
  // Nesting beyond kMaxJsonDepth.
  std::string deep =
      "{\"data\": {\"A\": {\"x\": " + std::string(kMaxJsonDepth, '[') +
      std::string(kMaxJsonDepth, ']') + "}}}";
  std::vector<Member> members;
  StatusOr<FastMembers> fast = Fast(deep, &members);
  ASSERT_TRUE(fast.ok());
  EXPECT_FALSE(fast->decided);
  // Decided: other top-level values, data given as null, no data at all.
  for (const char* text : {"{\"data\": null}", "{\"task\": [1, {\"a\": 2}]}",
                           "{}", "  {\"data\": {}}  \n"}) {
    members.clear();
    fast = Fast(text, &members);
    ASSERT_TRUE(fast.ok()) << text;
    EXPECT_TRUE(fast->decided) << text;
  }
}

TEST(JsonFastTest, ASinkErrorStopsTheParse) {
  std::string text = "{\"data\": {\"A\": {}, \"B\": {}, \"C\": {}}}";
  int calls = 0;
  StatusOr<FastMembers> fast = ParseJsonMembersFast(
      text, "data", [&](std::string_view key, JsonNode, size_t) {
        ++calls;
        return key == "B" ? Status::InvalidArgument("B", "stop") : Status::Ok();
      });
  EXPECT_FALSE(fast.ok());
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace lockstep
