// ParseYamlMapping: msprobe's data_mapping.yaml subset, and refusals of
// everything outside it (with the line), never a guess.
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
}

}  // namespace
}  // namespace lockstep
