// ParseYamlMapping: msprobe's data_mapping.yaml subset; ParseYamlTwoLevel:
// the layer mapping's; PlainYamlType: PyYAML's types. Refusals of
// everything outside the subsets (with the line), never a guess.
#include "lockstep/format/yaml_mapping.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace lockstep {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs Ok(const std::string& text) {
  auto r = ParseYamlMapping(text, "m.yaml");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Pairs{};
}

std::string Error(const std::string& text) {
  auto r = ParseYamlMapping(text, "m.yaml");
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(YamlMappingTest, ReadsMsprobesDataMapping) {
  EXPECT_EQ(Ok("Functional.flash_attention_score.4.forward.input.0: "
               "NPU.npu_fusion_attention.4.forward.input.0\n"
               "Functional.linear.0.forward.output.0: "
               "Functional.linear.1.forward.output.0\n"),
            (Pairs{{"Functional.flash_attention_score.4.forward.input.0",
                    "NPU.npu_fusion_attention.4.forward.input.0"},
                   {"Functional.linear.0.forward.output.0",
                    "Functional.linear.1.forward.output.0"}}));
}

TEST(YamlMappingTest, CommentsQuotesAndDocumentMarkers) {
  EXPECT_EQ(
      Ok("---\n# a comment\n\n'a.b': \"c.d\"  # tail\r\n"
         "\"x\\\"y\": 'it''s'\nurl: http://h:80/p\n"),
      (Pairs{{"a.b", "c.d"}, {"x\"y", "it's"}, {"url", "http://h:80/p"}}));
  EXPECT_TRUE(Ok("").empty());
  EXPECT_TRUE(Ok("{}\n").empty());
  EXPECT_TRUE(Ok("# nothing\n---\n").empty());
}

TEST(YamlMappingTest, RefusesWhatItDoesNotRead) {
  EXPECT_NE(Error("a: b\nc:\n  d: e\n").find("line 2"), std::string::npos);
  EXPECT_NE(Error("a: b\n  c: d\n").find("indented"), std::string::npos);
  EXPECT_NE(Error("- a\n").find("'-'"), std::string::npos);
  EXPECT_NE(Error("a: [b, c]\n").find("'['"), std::string::npos);
  EXPECT_NE(Error("{a: b}\n").find("'{'"), std::string::npos);
  EXPECT_NE(Error("a: &x b\n").find("'&'"), std::string::npos);
  EXPECT_NE(Error("a: b: c\n").find("quote it"), std::string::npos);
  EXPECT_NE(Error("a: b\na: c\n").find("mapped twice"), std::string::npos);
  EXPECT_NE(Error("just text\n").find("key: value"), std::string::npos);
  EXPECT_NE(Error("a: \"open\n").find("not closed"), std::string::npos);
  EXPECT_NE(Error("a: \"\\q\"\n").find("escape"), std::string::npos);
  EXPECT_NE(Error("a: b\n---\nc: d\n").find("second YAML document"),
            std::string::npos);
  EXPECT_NE(Error("a: 'b' c\n").find("after the value"), std::string::npos);
  EXPECT_NE(Error(std::string("a: b\0c\n", 7)).find("NUL"), std::string::npos);
  EXPECT_NE(Error("'': b\n").find("empty key"), std::string::npos);
}

TEST(YamlMappingTest, EveryTruncationIsReadOrRefusedCleanly) {
  const std::string text =
      "# map\n'Functional.linear.0.forward.input.0': "
      "\"Functional.linear.1.forward.input.0\"\nTorch.add.0.forward: x\n";
  for (size_t n = 0; n <= text.size(); ++n) {
    auto r = ParseYamlMapping(text.substr(0, n), "t.yaml");
    if (r.ok()) {
      EXPECT_LE(r->size(), 2u);
    } else {
      EXPECT_NE(r.status().message().find("t.yaml"), std::string::npos);
    }
  }
}

TEST(YamlMappingTest, MissingFileIsAnError) {
  EXPECT_FALSE(ReadYamlMapping("/nonexistent/map.yaml").ok());
  EXPECT_FALSE(ReadYamlTwoLevel("/nonexistent/map.yaml").ok());
}

// What PyYAML 6's safe_load (msprobe's reader) makes of each plain scalar,
// as printed by `yaml.safe_load("k: " + s)` with the venv's PyYAML.
const std::pair<const char*, YamlType> kPyYamlTypes[] = {
    {"abc", YamlType::kStr},
    {"layers.0", YamlType::kStr},
    {"0.weight", YamlType::kStr},
    {"1.2.3", YamlType::kStr},
    {"", YamlType::kNull},
    {"~", YamlType::kNull},
    {"null", YamlType::kNull},
    {"NULL", YamlType::kNull},
    {"nULL", YamlType::kStr},
    {"Yes", YamlType::kBool},
    {"ON", YamlType::kBool},
    {"True", YamlType::kBool},
    {"tRue", YamlType::kStr},
    {"y", YamlType::kStr},
    {"1_0", YamlType::kInt},
    {"0o7", YamlType::kStr},
    {"0x1F", YamlType::kInt},
    {"0x", YamlType::kStr},
    {"0b101", YamlType::kInt},
    {"0b", YamlType::kStr},
    {"07", YamlType::kInt},
    {"09", YamlType::kStr},
    {"0_", YamlType::kInt},
    {"+0", YamlType::kInt},
    {"-12", YamlType::kInt},
    {"1__", YamlType::kInt},
    {"_1", YamlType::kStr},
    {"1:30", YamlType::kInt},
    {"1:60", YamlType::kStr},
    {"0:30", YamlType::kStr},
    {"1:30.5", YamlType::kFloat},
    {".5", YamlType::kFloat},
    {"1.", YamlType::kFloat},
    {"1e5", YamlType::kStr},
    {"1.0e+5", YamlType::kFloat},
    {"1.0e5", YamlType::kStr},
    {"1_000.5", YamlType::kFloat},
    {"+.inf", YamlType::kFloat},
    {"-.inf", YamlType::kFloat},
    {".NaN", YamlType::kFloat},
    {"-.nan", YamlType::kStr},
    {"-.5", YamlType::kStr},
    {"+", YamlType::kStr},
    {".", YamlType::kStr},
    {"2001-12-14", YamlType::kTimestamp},
    {"2001-1-4", YamlType::kStr},
    {"2001-12-14t21:59:43.10-05:00", YamlType::kTimestamp},
    {"2001-12-14 21:59:43.10 -5", YamlType::kTimestamp},
    {"2001-12-14T21:59:43Z", YamlType::kTimestamp},
    {"=", YamlType::kRefused},
    {"<<", YamlType::kRefused},
};

TEST(YamlTypeTest, PlainScalarsAreTypedAsPyYaml) {
  for (const auto& [text, type] : kPyYamlTypes) {
    EXPECT_EQ(PlainYamlType(text), type)
        << "'" << text << "' is " << YamlTypeName(PlainYamlType(text));
  }
}

YamlTwoLevel TwoOk(const std::string& text) {
  auto r = ParseYamlTwoLevel(text, "l.yaml");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : YamlTwoLevel{};
}

std::string TwoError(const std::string& text) {
  auto r = ParseYamlTwoLevel(text, "l.yaml");
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(YamlTwoLevelTest, ReadsMsprobesLayerMapping) {
  YamlTwoLevel doc = TwoOk(
      "---\nTopLayer:\n  network_with_loss: module\n\n"
      "VocabParallelEmbedding:  # a comment\n    logical_or: __or__\n"
      "    'reduce_from_mp_region.all_reduce': \"all_reduce\"\n"
      "FusedRMSNorm:\n  RmsNorm: npu_rms_norm(x)  # note\n");
  EXPECT_FALSE(doc.null_document);
  ASSERT_EQ(doc.sections.size(), 3u);
  const YamlSection& v = doc.sections[1];
  EXPECT_EQ(v.key.text, "VocabParallelEmbedding");
  EXPECT_EQ(v.key.line, 5u);
  EXPECT_TRUE(v.is_mapping);
  ASSERT_EQ(v.entries.size(), 2u);
  EXPECT_EQ(v.entries[1].first.text, "reduce_from_mp_region.all_reduce");
  EXPECT_EQ(v.entries[1].second.text, "all_reduce");
  EXPECT_EQ(v.entries[1].second.line, 7u);
  EXPECT_EQ(doc.sections[2].entries[0].second.text, "npu_rms_norm(x)");
}

TEST(YamlTwoLevelTest, EmptyDocumentsNullValuesAndTypes) {
  EXPECT_TRUE(TwoOk("").null_document);
  EXPECT_TRUE(TwoOk("# only\n---\n").null_document);
  YamlTwoLevel empty = TwoOk("{}\n");
  EXPECT_FALSE(empty.null_document);
  EXPECT_TRUE(empty.sections.empty());
  YamlTwoLevel doc = TwoOk("A:\nB: {}\nC: text\n1:\n  0: 'x'\n  '0': ~\n");
  ASSERT_EQ(doc.sections.size(), 4u);
  EXPECT_FALSE(doc.sections[0].is_mapping);
  EXPECT_EQ(doc.sections[0].scalar.type, YamlType::kNull);
  EXPECT_TRUE(doc.sections[1].is_mapping);
  EXPECT_TRUE(doc.sections[1].entries.empty());
  EXPECT_EQ(doc.sections[2].scalar.text, "text");
  EXPECT_EQ(doc.sections[3].key.type, YamlType::kInt);
  const auto& e = doc.sections[3].entries;
  ASSERT_EQ(e.size(), 2u);  // int 0 and str '0' are two keys
  EXPECT_EQ(e[0].first.type, YamlType::kInt);
  EXPECT_EQ(e[0].second.type, YamlType::kStr);
  EXPECT_EQ(e[1].first.type, YamlType::kStr);
  EXPECT_EQ(e[1].second.type, YamlType::kNull);
}

TEST(YamlTwoLevelTest, RefusesWhatItDoesNotRead) {
  EXPECT_NE(TwoError("- a\n- b\n").find("a list"), std::string::npos);
  EXPECT_NE(TwoError("A:\n  - a\n").find("a list under 'A'"),
            std::string::npos);
  EXPECT_NE(TwoError("A:\n  b:\n    c: d\n").find("third level"),
            std::string::npos);
  EXPECT_NE(TwoError("A:\n  b: {}\n").find("third level"), std::string::npos);
  EXPECT_NE(TwoError("A:\n    b: c\n  d: e\n").find("indented less"),
            std::string::npos);
  EXPECT_NE(TwoError("A:\n\tb: c\n").find("tab"), std::string::npos);
  EXPECT_NE(TwoError("A: x\n  b: c\n").find("has a value on its line"),
            std::string::npos);
  EXPECT_NE(TwoError("  b: c\n").find("under no key"), std::string::npos);
  EXPECT_NE(TwoError("A:\n  b: c\nA:\n  d: e\n").find("given twice"),
            std::string::npos);
  EXPECT_NE(TwoError("A:\n  b: c\n  'b': d\n").find("given twice under 'A'"),
            std::string::npos);
  EXPECT_NE(TwoError("{}\nA:\n").find("after `{}`"), std::string::npos);
  EXPECT_NE(TwoError("A: {b: c}\n").find("'{'"), std::string::npos);
  EXPECT_NE(TwoError("A:\n  b: [c]\n").find("'['"), std::string::npos);
  EXPECT_NE(TwoError("just text\n").find("key: value"), std::string::npos);
  EXPECT_NE(TwoError("A:\n  b: c d: e\n").find("quote it"), std::string::npos);
  EXPECT_NE(TwoError("A:\n  b: 'c' d\n").find("text after a value"),
            std::string::npos);
  EXPECT_NE(TwoError("A:\n---\nB:\n").find("second YAML document"),
            std::string::npos);
  EXPECT_NE(TwoError(std::string("A:\n  b: c\0\n", 10)).find("NUL"),
            std::string::npos);
  EXPECT_NE(TwoError(": x\n").find("key is missing"), std::string::npos);
}

TEST(YamlTwoLevelTest, EveryTruncationIsReadOrRefusedCleanly) {
  const std::string text =
      "# rules\nTopLayer:\n  network_with_loss: module\n"
      "ParallelAttention:\n  'flash_attention_score': "
      "\"core_attention_flash.npu_fusion_attention\"\n";
  for (size_t n = 0; n <= text.size(); ++n) {
    auto r = ParseYamlTwoLevel(text.substr(0, n), "t.yaml");
    if (r.ok()) {
      EXPECT_LE(r->sections.size(), 2u);
    } else {
      EXPECT_NE(r.status().message().find("t.yaml"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace lockstep
