// ParseApiMappingFile: msprobe's custom API mapping files (-am FILE) in the
// layouts msprobe reads and the one its docs show, and refusals, with the
// line, of what would otherwise unpair rows silently.
#include "lockstep/format/api_mapping_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

using Items = std::vector<std::string>;
constexpr int kArgs = static_cast<int>(ApiMappingTerm::kArgs);
constexpr int kOutput = static_cast<int>(ApiMappingTerm::kOutput);
constexpr int kParameters = static_cast<int>(ApiMappingTerm::kParameters);

std::vector<ApiMappingEntry> Ok(const std::string& text) {
  auto r = ParseApiMappingFile(text, "am.yaml");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::vector<ApiMappingEntry>{};
}

std::string Error(const std::string& text) {
  auto r = ParseApiMappingFile(text, "am.yaml");
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

TEST(ApiMappingFileTest, ReadsTheListMsprobeReads) {
  auto e =
      Ok("- ms_api: Functional.flash_attention_score\n"
         "  pt_api: NPU.npu_fusion_attention\n"
         "  ms_args: [0, 1, 2, attn_mask, pre_tokens]\n"
         "  pt_args: [1, 0, 2, atten_mask, 3]\n"
         "  ms_output: [0, 1, 2, 3]\n"
         "  pt_output: [0, 1, 2, 3]\n"
         "- ms_api: Tensor.__add__\n"
         "  pt_api: Tensor.__add__\n"
         "  ms_args: [1, 0]\n"
         "  pt_args: [0, 1]\n");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].ms_api, "Functional.flash_attention_score");
  EXPECT_EQ(e[0].pt_api, "NPU.npu_fusion_attention");
  EXPECT_EQ(e[0].ms[kArgs], (Items{"0", "1", "2", "attn_mask", "pre_tokens"}));
  EXPECT_EQ(e[0].pt[kArgs], (Items{"1", "0", "2", "atten_mask", "3"}));
  EXPECT_EQ(e[0].ms[kOutput], (Items{"0", "1", "2", "3"}));
  EXPECT_TRUE(e[0].ms[kParameters].empty());
  EXPECT_EQ(e[0].line, 1);
  EXPECT_EQ(e[1].line, 7);
  EXPECT_EQ(e[1].ms[kArgs], (Items{"1", "0"}));
}

TEST(ApiMappingFileTest, ReadsTheDocumentedSingleEntryAndPluralKeys) {
  // msprobe 26.2 crashes on this layout (AttributeError) and never reads
  // ms_outputs; lockstep reads both as the docs mean them.
  auto e =
      Ok("ms_api: Functional.flash_attention_score\n"
         "pt_api: NPU.npu_fusion_attention\n"
         "ms_args: [0, 1, 2]\n"
         "pt_args: [0, 1, 2]\n"
         "ms_outputs: [0]\n"
         "pt_outputs: [0]\n");
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].ms[kOutput], (Items{"0"}));
  EXPECT_EQ(e[0].pt[kOutput], (Items{"0"}));
}

TEST(ApiMappingFileTest, BlockListsQuotesCommentsAndDocumentMarker) {
  auto e =
      Ok("---\n"
         "# comment\n"
         "- ms_api: \"Mint.cos\"   # the MindSpore name\n"
         "  pt_api: 'Torch.cos'\n"
         "  ms_args:\n"
         "  - 0\n"
         "  - 'it''s'\n"
         "  pt_args:\n"
         "      - \"0\"\n"
         "      - x # comment\n"
         "  ms_parameters: []\n"
         "  pt_parameters: []\n"
         "\n"
         "-\n"
         "  ms_api: Tensor.__add__\n"
         "  pt_api: Tensor.__add__\n");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].ms_api, "Mint.cos");
  EXPECT_EQ(e[0].pt_api, "Torch.cos");
  EXPECT_EQ(e[0].ms[kArgs], (Items{"0", "it's"}));
  EXPECT_EQ(e[0].pt[kArgs], (Items{"0", "x"}));
  EXPECT_EQ(e[1].ms_api, "Tensor.__add__");
}

TEST(ApiMappingFileTest, RefusesWithTheLine) {
  auto has = [](const std::string& text, const std::string& what) {
    std::string m = Error(text);
    EXPECT_NE(m.find(what), std::string::npos) << m;
  };
  has("", "no mapping entries");
  has("# only a comment\n", "no mapping entries");
  has("- just a string\n", "line 1: expected `key: value`");
  has("- ms_api: A.b\n  pt_api: C.d\n  ms_arg: [0]\n",
      "line 3: unknown key 'ms_arg'");
  has("- ms_api: A.b\n  pt_api: C.d\n  ms_args: [0]\n  ms_args: [1]\n",
      "line 4: 'ms_args' is given twice");
  has("- ms_api: A.b\n  pt_api: C.d\n  ms_output: [0]\n  ms_outputs: [1]\n",
      "'ms_outputs' is given twice");
  has("- ms_api: A.b\n  ms_args: [0]\n", "line 1 has no pt_api");
  has("- pt_api: A.b\n", "has no ms_api");
  has("- ms_api: A.b\n  pt_api: C.d\n  ms_args: 0\n",
      "line 3: 'ms_args' must be a list");
  has("- ms_api: A.b\n  pt_api: C.d\n  ms_args: [0, 1\n", "not closed");
  has("- ms_api: A.b\n  pt_api: C.d\n  ms_args: [0, , 1]\n",
      "an empty list item");
  has("- ms_api: A.b\n  pt_api: C.d\n  ms_args:\n  pt_args: [0]\n",
      "line 4: 'ms_args' has no items");
  has("- ms_api: A.b\n   pt_api: C.d\n", "line 2: a key indented unlike");
  has("- ms_api: A.b\n  pt_api: C.d\n - ms_api: E.f\n  pt_api: G.h\n",
      "line 3: an entry indented unlike the first");
  has("- ms_api: A.b\n\tpt_api: C.d\n", "line 2: a tab");
  has("- ms_api: 'A.b\n", "not closed on its line");
  has("- ms_api: \"A\\x\"\n", "unsupported escape");
  has("- ms_api: A.b\n  pt_api: C.d\n---\n", "a second YAML document");
  has("- ms_api: A.b\n  pt_api: {C: d}\n", "'{' starts YAML");
  has("ms_api: A.b\npt_api: C.d\n- ms_api: E.f\n", "line 3: a list item");
  has("- ms_api: A.b\n  pt_api: C.d\n  ms_args: [0] x\n",
      "text after the list");
  has(std::string("- ms_api: A\0b\n", 14), "a NUL byte");
}

}  // namespace
}  // namespace lockstep
