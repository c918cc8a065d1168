#include "lockstep/format/py_json_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "lockstep/core/file.h"
#include "lockstep/format/json_reader.h"
#include "lockstep/format/json_writer.h"

namespace lockstep {
namespace {

// Writes `v` with the builder, the way a caller would: containers member
// by member, scalars directly. Sub-values of depth >= 2 go through a
// separate level-0 builder and Fragment when `fragments` is set.
void Emit(const PyValue& v, bool fragments, PyJsonBuilder* b, int depth = 0) {
  switch (v.kind()) {
    case PyValue::Kind::kNone:
      b->Null();
      return;
    case PyValue::Kind::kBool:
      b->Bool(v.as_bool());
      return;
    case PyValue::Kind::kInt:
      b->Int(v.as_int());
      return;
    case PyValue::Kind::kFloat:
      b->Float(v.as_double());
      return;
    case PyValue::Kind::kStr:
      b->Str(v.as_str());
      return;
    case PyValue::Kind::kList:
    case PyValue::Kind::kDict:
      break;
  }
  if (fragments && depth >= 2) {
    PyJsonBuilder sub;
    Emit(v, fragments, &sub, 0);
    b->Fragment(sub.Take());
    return;
  }
  if (v.kind() == PyValue::Kind::kList) {
    b->BeginList();
    for (const PyValue& item : v.items()) Emit(item, fragments, b, depth + 1);
    b->EndList();
  } else {
    b->BeginDict();
    for (const auto& [key, val] : v.fields()) {
      b->Key(key);
      Emit(val, fragments, b, depth + 1);
    }
    b->EndDict();
  }
}

std::string Built(const PyValue& v, int level, bool fragments) {
  PyJsonBuilder b(level);
  Emit(v, fragments, &b);
  EXPECT_EQ(b.depth(), 0u);
  return b.Take();
}

std::string Encoded(const PyValue& v, int level) {
  std::string out;
  AppendPyJson(v, 1, level, &out);
  return out;
}

PyValue RandomValue(std::mt19937_64* rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth >= 4 ? 4 : 6);
  switch (kind(*rng)) {
    case 0:
      return PyValue();
    case 1:
      return PyValue::Bool((*rng)() & 1);
    case 2: {
      const int64_t edge[] = {0, -1, 7, std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max()};
      uint64_t r = (*rng)();
      return PyValue::Int(r % 3 == 0 ? edge[r % 5]
                                     : static_cast<int64_t>(r) >> (r % 60));
    }
    case 3: {
      uint64_t r = (*rng)();
      const double edge[] = {0.0,
                             -0.0,
                             std::nan(""),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             1e16,
                             1e-5,
                             0.1};
      if (r % 4 == 0) return PyValue::Float(edge[(r >> 8) % 8]);
      double d;
      uint64_t bits = (*rng)();
      std::memcpy(&d, &bits, sizeof d);
      return PyValue::Float(d);
    }
    case 4: {
      std::string s;
      size_t n = (*rng)() % 12;
      for (size_t i = 0; i < n; ++i) {
        const char* pieces[] = {"a",
                                "\"",
                                "\\",
                                "\n",
                                "\x01",
                                "\xc3\xa9",
                                "\xf0\x9f\x98\x80",
                                "Functional.linear"};
        s += pieces[(*rng)() % 8];
      }
      return PyValue::Str(s);
    }
    case 5: {
      std::vector<PyValue> items;
      size_t n = (*rng)() % 4;
      for (size_t i = 0; i < n; ++i)
        items.push_back(RandomValue(rng, depth + 1));
      return PyValue::List(std::move(items));
    }
    default: {
      std::vector<std::pair<std::string, PyValue>> fields;
      size_t n = (*rng)() % 4;
      for (size_t i = 0; i < n; ++i) {
        std::string key = "k";
        key += std::to_string(i);
        if ((*rng)() & 1) key += '\t';
        if ((*rng)() % 5 == 0) key += std::string(100, 'x');  // long keys
        fields.emplace_back(std::move(key), RandomValue(rng, depth + 1));
      }
      return PyValue::Dict(std::move(fields));
    }
  }
}

TEST(PyJsonBuilderTest, MatchesTheTreeEncoderOnRandomValues) {
  std::mt19937_64 rng(20261121);
  for (int i = 0; i < 3000; ++i) {
    PyValue v = RandomValue(&rng, 0);
    int level = i % 4;
    std::string want = Encoded(v, level);
    ASSERT_EQ(Built(v, level, false), want) << "value " << i;
    ASSERT_EQ(Built(v, level, true), want) << "value " << i << " (fragments)";
  }
}

// Deeper than the indents the builder keeps ready (64 spaces).
TEST(PyJsonBuilderTest, DeepNestingMatchesTheTreeEncoder) {
  PyValue v = PyValue::List({PyValue::Int(1), PyValue::Str("leaf")});
  for (int depth = 0; depth < 80; ++depth) {
    v = depth % 2 ? PyValue::List({v, PyValue::Int(depth)})
                  : PyValue::Dict({{"k", v}, {"n", PyValue::Int(depth)}});
  }
  for (int level : {0, 3}) {
    EXPECT_EQ(Built(v, level, false), Encoded(v, level));
  }
}

// LateFloat's text, expanded, is Float's.
TEST(PyJsonBuilderTest, LateFloatsExpandToFloats) {
  PyJsonBuilder late(2), now(2);
  for (PyJsonBuilder* b : {&late, &now}) {
    b->BeginDict().Key("Max");
    b == &late ? b->LateFloat(0.1) : b->Float(0.1);
    b->Key("v").BeginList();
    b == &late ? b->LateFloat(-3e-7) : b->Float(-3e-7);
    b->Int(2).EndList().EndDict();
  }
  std::string expanded;
  AppendExpandingLateFloats(late.text(), &expanded);
  EXPECT_EQ(expanded, now.text());
  EXPECT_NE(late.text(), now.text());
}

TEST(PyJsonBuilderTest, EmptyContainersAndNesting) {
  PyJsonBuilder b;
  b.BeginDict().Key("input_args").BeginList().EndList();
  b.Key("input_kwargs").BeginDict().EndDict();
  b.Key("shape").BeginList().Int(32).Int(-6).EndList().EndDict();
  EXPECT_EQ(b.Take(),
            "{\n \"input_args\": [],\n \"input_kwargs\": {},\n \"shape\": "
            "[\n  32,\n  -6\n ]\n}");
  // Taken: the builder starts over.
  b.BeginList()
      .Float(0.1)
      .Raw(
          "\x01"
          "7\x02")
      .EndList();
  EXPECT_EQ(b.Take(),
            "[\n 0.1,\n \x01"
            "7\x02\n]");
}

TEST(PyJsonBuilderTest, RebuildsMsprobeDumpJsonEntriesByteForByte) {
  // Every entry of a real msprobe dump.json, rebuilt at dump.json's entry
  // level (2), equals the text AppendPyJson writes for it.
  auto text = ReadFileToString(std::string(LOCKSTEP_FIXTURES_DIR) +
                               "/msprobe/quick_start/step0/proc2016/dump.json");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto doc = ParsePyJson(*text, "dump.json");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  const PyValue* data = doc->Find("data");
  ASSERT_NE(data, nullptr);
  ASSERT_GT(data->fields().size(), 10u);
  for (const auto& [name, entry] : data->fields()) {
    ASSERT_EQ(Built(entry, 2, true), Encoded(entry, 2)) << name;
  }
}

}  // namespace
}  // namespace lockstep
