#include "lockstep/format/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "lockstep/core/file.h"
#include "lockstep/format/json_reader.h"
#include "testing/same_bytes.h"

namespace lockstep {
namespace {

const std::string kData =
    std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/dump_json";
const std::string kMsprobe = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";

std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : "";
}

PyValue MustParse(const std::string& text) {
  auto v = ParsePyJson(text, "t");
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : PyValue();
}

using lockstep::testing::SameBytes;

TEST(JsonWriterTest, ScalarsAsPythonWritesThem) {
  EXPECT_EQ(ToPyJson(PyValue()), "null");
  EXPECT_EQ(ToPyJson(PyValue::Bool(true)), "true");
  EXPECT_EQ(ToPyJson(PyValue::Int(-42)), "-42");
  EXPECT_EQ(ToPyJson(PyValue::BigInt("123456789012345678901234567890")),
            "123456789012345678901234567890");
  EXPECT_EQ(ToPyJson(PyValue::Float(1.0)), "1.0");
  EXPECT_EQ(ToPyJson(PyValue::Float(-0.0)), "-0.0");
  EXPECT_EQ(ToPyJson(PyValue::Float(1e16)), "1e+16");
  EXPECT_EQ(ToPyJson(PyValue::Float(1e-5)), "1e-05");
  EXPECT_EQ(ToPyJson(PyValue::Float(std::nan(""))), "NaN");
  EXPECT_EQ(ToPyJson(PyValue::Float(-INFINITY)), "-Infinity");
}

TEST(JsonWriterTest, StringEscapesAreEnsureAscii) {
  EXPECT_EQ(ToPyJson(PyValue::Str("a\"b\\c/\b\f\n\r\t")),
            R"("a\"b\\c/\b\f\n\r\t")");
  EXPECT_EQ(ToPyJson(PyValue::Str(std::string("\x00\x1f\x7f", 3))),
            R"("\u0000\u001f\u007f")");
  EXPECT_EQ(ToPyJson(PyValue::Str("caf\xc3\xa9 \xe4\xb8\xad")),
            R"("caf\u00e9 \u4e2d")");
  EXPECT_EQ(ToPyJson(PyValue::Str("\xf0\x9f\x98\x80")), R"("\ud83d\ude00")");
  // Not UTF-8: lone continuation, overlong, cut short; a surrogate stored
  // "WTF-8" style is written as its escape.
  EXPECT_EQ(ToPyJson(PyValue::Str("\x80|\xc0\xaf|\xed\xa0\x80|\xe4\xb8")),
            R"("\ufffd|\ufffd\ufffd|\ud800|\ufffd\ufffd")");
}

// The escape scan reads 8 bytes at a time: every byte value that needs an
// escape, at every position of a word (and across words), must be found.
// Escaping is per character, so a string's text is the texts of its parts.
TEST(JsonWriterTest, EscapesAreFoundAtEveryPositionOfAWord) {
  auto inner = [](const std::string& s) {
    std::string out;
    AppendPyJsonString(s, &out);
    return out.substr(1, out.size() - 2);
  };
  std::vector<std::string> specials;
  for (int c = 0; c < 0x80; ++c) specials.push_back(std::string(1, char(c)));
  specials.push_back("\xc3\xa9");      // é: two bytes
  specials.push_back("\xe4\xb8\xad");  // three
  specials.push_back("\x80");          // not UTF-8
  for (const std::string& sp : specials) {
    for (size_t at = 0; at < 20; ++at) {
      std::string before(at, 'a'), after(19 - at, 'z');
      EXPECT_EQ(inner(before + sp + after),
                inner(before) + inner(sp) + inner(after))
          << "byte " << int(static_cast<unsigned char>(sp[0])) << " at " << at;
    }
  }
  // Plain text is copied whole.
  EXPECT_EQ(inner("Tensor.add_.0.forward.input.0"),
            "Tensor.add_.0.forward.input.0");
}

// A late float becomes exactly the text AppendPyJsonFloat writes.
TEST(JsonWriterTest, LateFloatsExpandToTheirRepr) {
  std::mt19937_64 rng(5);
  std::vector<double> values = {
      0.0, -0.0, 1.0,       -2.5,     1e16,   1e-5,
      0.1, NAN,  -INFINITY, INFINITY, 5e-324, 1.7976931348623157e308};
  for (int i = 0; i < 2000; ++i) {
    uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, 8);
    values.push_back(d);
  }
  for (double d : values) {
    std::string late = "[";
    AppendLateFloat(d, &late);
    late += ", 7]";
    std::string want = "[";
    AppendPyJsonFloat(d, &want);
    want += ", 7]";
    std::string got;
    AppendExpandingLateFloats(late, &got);
    EXPECT_EQ(got, want);
  }
  // Cut short or not hex: null, and the text after it is kept.
  std::string got;
  AppendExpandingLateFloats(std::string("[\x03") + "3ff0], 1", &got);
  EXPECT_EQ(got, "[null], 1");
  got.clear();
  AppendExpandingLateFloats(std::string("\x03") + "3ff00000000000", &got);
  EXPECT_EQ(got, "null");
  got.clear();
  AppendExpandingLateFloats("no marks", &got);
  EXPECT_EQ(got, "no marks");
}

TEST(JsonWriterTest, IndentedAndCompactLayout) {
  PyValue v =
      PyValue::Dict({{"a", PyValue::List({PyValue::Int(1), PyValue::List({})})},
                     {"b", PyValue::Dict({})},
                     {"c", PyValue::Dict({{"d", PyValue()}})}});
  EXPECT_EQ(ToPyJson(v, 1),
            "{\n \"a\": [\n  1,\n  []\n ],\n \"b\": {},\n \"c\": {\n  \"d\": "
            "null\n }\n}");
  EXPECT_EQ(ToPyJson(v, -1), R"({"a": [1, []], "b": {}, "c": {"d": null}})");
  EXPECT_EQ(ToPyJson(v, 0),
            "{\n\"a\": [\n1,\n[]\n],\n\"b\": {},\n\"c\": {\n\"d\": null\n}\n}");
  std::string piece;
  AppendPyJson(PyValue::List({PyValue::Int(1)}), 1, 2, &piece);
  EXPECT_EQ(piece, "[\n   1\n  ]");
}

// Found by dump_json_fuzz: rapidjson keeps a lone low surrogate escape as
// 3 bytes that are not UTF-8, and the writer used to turn them into \ufffd.
TEST(JsonWriterTest, LoneLowSurrogateInAKeyRoundTrips) {
  std::string text = R"({"ld\ude00evel": "x\udc00"})";
  PyValue v = MustParse(text);
  EXPECT_EQ(ToPyJson(v, -1), text);
  EXPECT_TRUE(MustParse(ToPyJson(v, 1)) == v);
}

// Python's json.dump of a document of hard cases (make_expected.py).
TEST(JsonWriterTest, TrickyDocumentIsByteIdenticalToPython) {
  std::string indented = Slurp(kData + "/tricky.indent1.json");
  PyValue v = MustParse(indented);
  EXPECT_TRUE(SameBytes(ToPyJson(v, 1), indented));
  EXPECT_TRUE(
      SameBytes(ToPyJson(v, -1), Slurp(kData + "/tricky.compact.json")));
}

// msprobe wrote these with json.dump(indent=1): reading and writing them
// back must give the same bytes.
TEST(JsonWriterTest, MsprobeStackAndConstructFilesRoundTrip) {
  for (const char* rel : {"quick_start/step0/proc2016/stack.json",
                          "quick_start/step0/proc2016/construct.json",
                          "quick_start/step1/proc2016/construct.json",
                          "toy/dumpA/out/step0/proc16954/stack.json",
                          "toy/tensC/out/step0/proc21046/construct.json",
                          "toy/md5A/out/step0/proc18373/construct.json"}) {
    std::string text = Slurp(kMsprobe + "/" + rel);
    EXPECT_TRUE(SameBytes(ToPyJson(MustParse(text), 1), text)) << rel;
  }
}

// Random trees: write, read back, same tree.
PyValue RandomValue(std::mt19937_64& rng, int depth) {
  int kind = static_cast<int>(rng() % (depth > 3 ? 5 : 7));
  switch (kind) {
    case 0:
      return PyValue();
    case 1:
      return PyValue::Bool(rng() & 1);
    case 2:
      return PyValue::Int(static_cast<int64_t>(rng()));
    case 3: {
      uint64_t bits = rng();
      double d;
      std::memcpy(&d, &bits, 8);
      return PyValue::Float(d);
    }
    case 4: {
      std::string s;
      for (int i = static_cast<int>(rng() % 8); i > 0; --i) {
        static const char* kPieces[] = {
            "a",    "\"", "\\", "\n", "\x01", "\xc3\xa9", "\xf0\x9f\x98\x80",
            "\x7f", " "};
        s += kPieces[rng() % 9];
      }
      return PyValue::Str(s);
    }
    case 5: {
      std::vector<PyValue> items;
      for (int i = static_cast<int>(rng() % 4); i > 0; --i)
        items.push_back(RandomValue(rng, depth + 1));
      return PyValue::List(std::move(items));
    }
    default: {
      std::vector<std::pair<std::string, PyValue>> fields;
      for (int i = static_cast<int>(rng() % 4); i > 0; --i) {
        fields.emplace_back(std::string("k").append(std::to_string(i)),
                            RandomValue(rng, depth + 1));
      }
      return PyValue::Dict(std::move(fields));
    }
  }
}

TEST(JsonWriterTest, RandomTreesRoundTrip) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    PyValue v = RandomValue(rng, 0);
    for (int indent : {-1, 0, 1, 4}) {
      std::string text = ToPyJson(v, indent);
      auto back = ParsePyJson(text, "t");
      ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
      ASSERT_TRUE(*back == v) << text;
      ASSERT_EQ(ToPyJson(*back, indent), text);
    }
  }
}

}  // namespace
}  // namespace lockstep
