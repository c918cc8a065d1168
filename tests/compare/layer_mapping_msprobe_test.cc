// -lm on msprobe's layer-mapping test set B (its full MindSpore and PyTorch
// dumps, tests/fixtures/msprobe/cross_framework, with set A's construct.json
// and stack.json, which msprobe's B shares byte for byte): the mapping
// equals msprobe 26.2's, entry by entry and row by row
// (tests/data/layer_mapping/README.md).
#include <gtest/gtest.h>

#include <string>

#include "lockstep/compare/layer_mapping.h"
#include "lockstep/format/yaml_mapping.h"

namespace lockstep {
namespace {

const std::string kData = LOCKSTEP_SOURCE_DIR "/tests/data/layer_mapping/";
const std::string kDumps = LOCKSTEP_FIXTURES_DIR "/msprobe/cross_framework/";

// Set B's side `fw` ("mindspore", "pytorch"); without construct.json and
// stack.json for msprobe's case X_lm_no_construct.
LayerSide SetB(const std::string& fw, bool structure = true) {
  std::string a = kData + "msprobe_A/" + fw + "/";
  std::string none = kData + "no_such_file.json";
  return LayerSide{kDumps + fw + "/dump.json",
                   structure ? a + "stack.json" : none,
                   structure ? a + "construct.json" : none};
}

LayerPairs Expected(const std::string& name) {
  auto pairs = ReadYamlMapping(kData + "expected/" + name + ".yaml");
  EXPECT_TRUE(pairs.ok()) << pairs.status().message();
  return pairs.ok() ? *pairs : LayerPairs{};
}

// Pair by pair, so that a difference names its row.
void ExpectSamePairs(const LayerPairs& got, const LayerPairs& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first) << "pair " << i;
    EXPECT_EQ(got[i].second, want[i].second)
        << "pair " << i << " " << got[i].first;
  }
}

LayerRules SetBRules() {
  auto rules = ReadLayerRules(kData + "msprobe_A/layer_mapping.yaml");
  EXPECT_TRUE(rules.ok()) << rules.status().message();
  return rules.ok() ? *rules : LayerRules{};
}

// msprobe's B_lm, and B_lm_am, B_lm_am3, B_lm_cm, B_lm_dm, B_lm_fm, whose
// data mappings are byte-identical to it (-am, -cm, -dm and -fm do not
// change the layer mapping; they change how it is used).
TEST(LayerMappingMsprobeTest, SetBWithItsRules) {
  LayerRules rules = SetBRules();
  auto got = LayerDataMapping(SetB("mindspore"), SetB("pytorch"), &rules);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSamePairs(*got, Expected("B_lm"));
  size_t paired = 0;
  for (const auto& [t, b] : *got) paired += b != kLayerNoPartner;
  EXPECT_EQ(paired, 32u);  // of 44, as msprobe's table
}

TEST(LayerMappingMsprobeTest, SetBWithoutRules) {
  auto got = LayerDataMapping(SetB("mindspore"), SetB("pytorch"), nullptr);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSamePairs(*got, Expected("B_lm_nofile"));
}

TEST(LayerMappingMsprobeTest, SetBWithoutStructureHasNoMapping) {
  LayerRules rules = SetBRules();
  auto got = LayerDataMapping(SetB("mindspore", false), SetB("pytorch", false),
                              &rules);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSamePairs(*got, Expected("X_lm_no_construct"));  // {}
  EXPECT_TRUE(got->empty());
}

// msprobe's own expectation for its API-level mapping
// (test/msprobe_test/mindspore_ut/compare/test_layer_mapping.py).
TEST(LayerMappingMsprobeTest, SetBEntriesAsMsprobesUnitTest) {
  const std::string c =
      "Cell.network_with_loss.module.language_model.encoder.layers.0.";
  const std::string m = "Module.module.module.language_model.encoder.layers.0.";
  const std::string ce =
      "Cell.network_with_loss.module.language_model.embedding.";
  const std::string me = "Module.module.module.language_model.embedding.";
  const LayerPairs want = {
      {"Tensor.__add__.0.forward", "N/A"},
      {"Tensor.__bool__.1.forward", "N/A"},
      {"Tensor.__add__.1.forward", "Tensor.__add__.0.forward"},
      {"Mint.logical_or.0.forward", "Tensor.__or__.0.forward"},
      {"Distributed.all_reduce.0.forward", "Distributed.all_reduce.0.forward"},
      {ce + "word_embeddings.VocabParallelEmbedding.forward.0",
       me + "word_embeddings.VocabParallelEmbedding.forward.0"},
      {"Primitive.norm.RmsNorm.0.forward", "NPU.npu_rms_norm.0.forward"},
      {c + "ParallelTransformerLayer.forward.0",
       m + "ParallelTransformerLayer.forward.0"},
      {c + "input_norm.FusedRMSNorm.backward.0", "N/A"},
      {c + "attention.ParallelAttention.forward.0",
       m + "self_attention.ParallelAttention.forward.0"},
      {"Mint.cos.0.forward", "Torch.cos.0.forward"},
      {"Functional.flash_attention_score.0.forward",
       "NPU.npu_fusion_attention.0.forward"},
      {"Functional.flash_attention_score.0.backward",
       "NPU.npu_fusion_attention.0.backward"},
  };
  LayerRules rules = SetBRules();
  auto got = LayerEntryMapping(SetB("mindspore"), SetB("pytorch"), &rules);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ExpectSamePairs(*got, want);
}

}  // namespace
}  // namespace lockstep
