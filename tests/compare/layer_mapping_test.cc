// -lm's data mapping against msprobe 26.2's own, case by case
// (tests/data/layer_mapping/README.md), and the rule file and input errors
// that msprobe fails on with a Python exception.
#include "lockstep/compare/layer_mapping.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/format/yaml_mapping.h"

namespace lockstep {
namespace {

const std::string kData = LOCKSTEP_SOURCE_DIR "/tests/data/layer_mapping/";

// msprobe's data_mapping_<time>.yaml for a case.
LayerPairs Expected(const std::string& name) {
  auto pairs = ReadYamlMapping(kData + "expected/" + name + ".yaml");
  EXPECT_TRUE(pairs.ok()) << pairs.status().message();
  return pairs.ok() ? *pairs : LayerPairs{};
}

// Equal pairs in equal order; else the first difference and its neighbours.
void ExpectSamePairs(const LayerPairs& got, const LayerPairs& want) {
  size_t n = std::min(got.size(), want.size());
  size_t bad = n;
  for (size_t i = 0; i < n && bad == n; ++i) {
    if (got[i] != want[i]) bad = i;
  }
  if (bad == n && got.size() == want.size()) return;
  std::string around;
  for (size_t i = bad > 2 ? bad - 2 : 0; i < std::min(bad + 3, n); ++i) {
    around += "\n  [" + std::to_string(i) + "] got " + got[i].first + " -> " +
              got[i].second + "\n        want " + want[i].first + " -> " +
              want[i].second;
  }
  ADD_FAILURE() << got.size() << " pairs, msprobe " << want.size()
                << "; first difference at " << bad << around;
}

struct Case {
  const char* name;   // msprobe's case (note lm_results/cases.csv)
  const char* dir;    // its inputs under tests/data/layer_mapping
  const char* rules;  // its rule file there, or nullptr for -lm alone
};

// Every -lm case of msprobe's runs whose inputs are all in tests/data (the
// S1_lm_fm case, -fm too, wrote the same mapping as S1_lm_nofile), and S7,
// run through msprobe's generate_data_mapping_by_layer_mapping.
const Case kCases[] = {
    {"A_lm", "msprobe_A", "msprobe_A/layer_mapping.yaml"},
    {"A_lm_nofile", "msprobe_A", nullptr},
    {"S1_lm_nofile", "s1_backward_index", nullptr},
    {"S2_lm_nofile", "s2_renumber_layers", nullptr},
    {"S3_lm_by_class", "s3_rules", "s3_rules/by_class.yaml"},
    {"S3_lm_by_attr_name", "s3_rules", "s3_rules/by_attr_name.yaml"},
    {"S5_lm_params", "s5_params", "s5_params/cell_names.yaml"},
    {"S6_lm_params_grad_renamed", "s6_params_grad_renamed",
     "s6_params_grad_renamed/layer_mapping.yaml"},
    {"S7_lm_rules", "s7_scopes", "s7_scopes/rules.yaml"},
    {"S7_lm_nofile", "s7_scopes", nullptr},
};

StatusOr<LayerPairs> RunCase(const std::string& dir, const char* rules_file) {
  LayerRules rules;
  if (rules_file != nullptr) {
    auto read = ReadLayerRules(kData + rules_file);
    if (!read.ok()) return read.status();
    rules = *read;
  }
  return LayerDataMapping(LayerSideOf(kData + dir + "/mindspore/dump.json"),
                          LayerSideOf(kData + dir + "/pytorch/dump.json"),
                          rules_file != nullptr ? &rules : nullptr);
}

TEST(LayerMappingTest, EqualsMsprobesDataMappingInEveryCase) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    auto got = RunCase(c.dir, c.rules);
    ASSERT_TRUE(got.ok()) << got.status().message();
    ExpectSamePairs(*got, Expected(c.name));
  }
}

TEST(LayerMappingTest, SetAPairsTheEmbeddingOnlyWithItsRules) {
  auto rules = ReadLayerRules(kData + "msprobe_A/layer_mapping.yaml");
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  auto entries = LayerEntryMapping(
      LayerSideOf(kData + "msprobe_A/mindspore/dump.json"),
      LayerSideOf(kData + "msprobe_A/pytorch/dump.json"), &*rules);
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_EQ((*entries)[0].second,
            "Module.module.module.language_model.embedding.word_embeddings."
            "VocabParallelEmbedding.forward.0");
}

// A scratch directory with files written into it.
class Scratch {
 public:
  Scratch() {
    dir_ = ::testing::TempDir() + "layer_mapping_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::filesystem::create_directories(
        std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
  }

 private:
  std::string dir_;
};

// A statistics dump.json of `framework` with one input row per entry.
std::string Dump(const std::vector<std::string>& entries,
                 const std::string& framework = "mindspore") {
  std::string data;
  for (const std::string& e : entries) {
    if (!data.empty()) data += ", ";
    data += "\"" + e + "\": {\"input_args\": [{\"type\": \"int\", " +
            "\"value\": 1}]}";
  }
  std::string fw =
      framework.empty() ? "" : "\"framework\": \"" + framework + "\", ";
  return "{" + fw + "\"task\": \"statistics\", \"data\": {" + data + "}}";
}

std::string Error(const StatusOr<LayerPairs>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(LayerMappingTest, OneOfStackAndConstructIsAnError) {
  // msprobe's S4_lm_stack_missing: CompareException INVALID_PATH_ERROR.
  auto r = RunCase("s4_no_stack", nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(Error(r).find("s4_no_stack/mindspore/stack.json: not found, but"),
            std::string::npos)
      << Error(r);
  Scratch s;
  s.Write("t/dump.json", Dump({"Mint.cos.0.forward"}));
  s.Write("t/stack.json", "{}");
  std::string b = s.Write("b/dump.json", Dump({"Torch.cos.0.forward"}));
  std::string t = s.Write("t/dump.json", Dump({"Mint.cos.0.forward"}));
  EXPECT_NE(Error(LayerDataMapping(LayerSideOf(t), LayerSideOf(b), nullptr))
                .find("construct.json: not found, but"),
            std::string::npos);
}

TEST(LayerMappingTest, NeitherStackNorConstructGivesNoMapping) {
  Scratch s;
  std::string t = s.Write("t/dump.json", Dump({"Mint.cos.0.forward"}));
  std::string b = s.Write("b/dump.json", Dump({"Torch.cos.0.forward"}));
  s.Write("b/stack.json", "{\"Torch.cos.0.forward\": []}");
  s.Write("b/construct.json", "{\"Torch.cos.0.forward\": null}");
  auto r = LayerDataMapping(LayerSideOf(t), LayerSideOf(b), nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->empty());
  // The baseline without: every target row has no partner.
  s.Write("t/stack.json", "{\"Mint.cos.0.forward\": []}");
  s.Write("t/construct.json", "{\"Mint.cos.0.forward\": \"\"}");
  std::filesystem::remove(s.Write("b/stack.json", ""));
  std::filesystem::remove(s.Write("b/construct.json", ""));
  r = LayerDataMapping(LayerSideOf(t), LayerSideOf(b), nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (LayerPairs{{"Mint.cos.0.forward.input.0", "N/A"}}));
  // An empty construct.json ({}) is as none (msprobe's `if not construct`).
  s.Write("t/construct.json", "{}");
  r = LayerDataMapping(LayerSideOf(t), LayerSideOf(b), nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->empty());
}

// One side's files in `s` under `side`/, with `construct` and `stack` JSON.
LayerSide Side(Scratch* s, const std::string& side, const std::string& dump,
               const std::string& construct, const std::string& stack) {
  std::string d = s->Write(side + "/dump.json", dump);
  s->Write(side + "/construct.json", construct);
  s->Write(side + "/stack.json", stack);
  return LayerSideOf(d);
}

TEST(LayerMappingTest, BadNamesParentsStacksAndFrameworksAreErrors) {
  Scratch s;
  LayerSide b = Side(&s, "b", Dump({"Torch.cos.0.forward"}, "pytorch"),
                     "{\"Torch.cos.0.forward\": null}", "{\"x\": []}");
  auto error = [&](const std::string& dump, const std::string& construct,
                   const std::string& stack) {
    return Error(
        LayerDataMapping(Side(&s, "t", dump, construct, stack), b, nullptr));
  };
  EXPECT_NE(error(Dump({"Mint.cos.forward"}), "{\"x\": 1}", "{\"x\": []}")
                .find("entry 'Mint.cos.forward': fewer than 4"),
            std::string::npos);
  EXPECT_NE(error(Dump({"Mint.cos.0.forward"}),
                  "{\"Mint.cos.0.forward\": \"Cell.a.forward\"}", "{\"x\": []}")
                .find("parent 'Cell.a.forward' has fewer than 4"),
            std::string::npos);
  EXPECT_NE(error(Dump({"Mint.cos.0.forward"}), "{\"Mint.cos.0.forward\": 7}",
                  "{\"x\": []}")
                .find("the parent is an int"),
            std::string::npos);
  EXPECT_NE(error(Dump({"Mint.cos.0.forward"}), "{\"x\": 1}",
                  "{\"Mint.cos.0.forward\": [\"a\", 1]}")
                .find("not a list of strings"),
            std::string::npos);
  EXPECT_NE(error(Dump({"Mint.cos.0.forward"}), "{\"x\": 1}",
                  "{\"Mint.cos.0.forward\": [\"File a.py, line 3\"]}")
                .find("has no `in <function>` part"),
            std::string::npos);
  EXPECT_NE(error(Dump({"Mint.cos.0.forward"}, ""), "{\"x\": 1}", "{\"x\": []}")
                .find("neither a MindSpore nor a PyTorch dump"),
            std::string::npos);
  EXPECT_NE(error(Dump({"Mint.cos.0.forward"}), "[1]", "{\"x\": []}")
                .find("expected a JSON object"),
            std::string::npos);
}

TEST(LayerMappingTest, FrameworkFunctionsScopeTopLevelApis) {
  // As Tensor.__add__.0 of msprobe's set B: an API called from the
  // framework's __getitem__ is not the one called directly.
  Scratch s;
  const std::string frames =
      "[\"File /x/msprobe/hook.py, line 1, in __call__, y\", "
      "\"File /x/msprobe/api.py, line 2, in f, ApiTemplate(a)(b)\", "
      "\"File /x/site-packages/mindspore/common/tensor.py, line 3, in "
      "__getitem__, z\", \"File /u/train.py, line 4, in main, w\"]";
  LayerSide t = Side(
      &s, "t", Dump({"Tensor.__add__.0.forward", "Tensor.__add__.1.forward"}),
      "{\"Tensor.__add__.0.forward\": \"\"}",
      "{\"Tensor.__add__.0.forward\": " + frames + "}");
  LayerSide b = Side(&s, "b", Dump({"Tensor.__add__.0.forward"}, "pytorch"),
                     "{\"Tensor.__add__.0.forward\": \"\"}", "{\"x\": []}");
  auto r = LayerEntryMapping(t, b, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(*r, (LayerPairs{
                    {"Tensor.__add__.0.forward", "N/A"},
                    {"Tensor.__add__.1.forward", "Tensor.__add__.0.forward"}}));
}

TEST(LayerMappingTest, GroupedStackJsonGivesNoFrameworkFunctions) {
  // msprobe's -lm reads stack.json as {name: stack}: the newer grouped
  // layout ({"0": [[names], stack]}) names no entry, so no API gets a
  // framework function in its scope.
  Scratch s;
  const std::string frames =
      "[\"File /x/msprobe/api.py, line 2, in f, ApiTemplate(a)(b)\", "
      "\"File /x/site-packages/mindspore/common/tensor.py, line 3, in "
      "__getitem__, z\"]";
  LayerSide t =
      Side(&s, "t", Dump({"Tensor.__add__.0.forward"}),
           "{\"Tensor.__add__.0.forward\": \"\"}",
           "{\"0\": [[\"Tensor.__add__.0.forward\"], " + frames + "]}");
  LayerSide b = Side(&s, "b", Dump({"Tensor.__add__.0.forward"}, "pytorch"),
                     "{\"Tensor.__add__.0.forward\": \"\"}", "{\"x\": []}");
  auto r = LayerEntryMapping(t, b, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(
      *r,
      (LayerPairs{{"Tensor.__add__.0.forward", "Tensor.__add__.0.forward"}}));
}

// ----- the rule file

LayerRules RulesOk(const std::string& text) {
  auto r = ParseLayerRules(text, "lm.yaml");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : LayerRules{};
}

std::string RulesError(const std::string& text) {
  auto r = ParseLayerRules(text, "lm.yaml");
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? "" : r.status().message();
}

std::vector<std::pair<std::string, size_t>> Keys(const LayerRules& rules,
                                                 const std::string& type,
                                                 const std::string& first) {
  std::vector<std::pair<std::string, size_t>> out;
  const std::vector<LayerRule>* found = rules.Find(type, first);
  for (size_t i = 0; found != nullptr && i < found->size(); ++i)
    out.emplace_back((*found)[i].key, (*found)[i].levels);
  return out;
}

TEST(LayerRulesTest, DottedKeysGroupByFirstPartLongestFirst) {
  LayerRules r = RulesOk(
      "A:\n  z: new_z\n  a.demo: new_demo\n  a: new_a\n  a.b.c: new_c\n"
      "  d.e: e\n  a.x: new_x\n");
  using K = std::vector<std::pair<std::string, size_t>>;
  EXPECT_EQ(Keys(r, "A", "a"),
            (K{{"a.b.c", 3}, {"a.demo", 2}, {"a.x", 2}, {"a", 1}}));
  EXPECT_EQ(Keys(r, "A", "d"), (K{{"d.e", 2}}));
  EXPECT_EQ(Keys(r, "A", "z"), (K{{"z", 1}}));
  EXPECT_EQ(r.Find("A", "e"), nullptr);
  EXPECT_EQ(r.Find("B", "a"), nullptr);
}

TEST(LayerRulesTest, TargetsLoseWhatFollowsAParenthesis) {
  LayerRules r = RulesOk(
      "N:\n  RmsNorm: npu_rms_norm(renamed)\n  'x(1)': y(2)(3)\n  w: (v)\n");
  EXPECT_EQ((*r.Find("N", "RmsNorm"))[0].target, "npu_rms_norm");
  EXPECT_EQ((*r.Find("N", "x(1)"))[0].key, "x(1)");  // keys keep theirs
  EXPECT_EQ((*r.Find("N", "x(1)"))[0].target, "y");
  EXPECT_EQ((*r.Find("N", "w"))[0].target, "");
}

TEST(LayerRulesTest, CellIsTheLegacyTopLayer) {
  LayerRules r = RulesOk("TopLayer:\n  a: b\nCell:\n  c: d\n");
  EXPECT_EQ(r.Find("TopLayer", "a"), nullptr);  // replaced
  EXPECT_EQ((*r.Find("TopLayer", "c"))[0].target, "d");
  EXPECT_EQ(r.rules.count("Cell"), 0u);
  // A Cell key with nothing under it is dropped, the TopLayer one kept.
  r = RulesOk("Cell:\nTopLayer:\n  a: b\n");
  EXPECT_EQ((*r.Find("TopLayer", "a"))[0].target, "b");
  // A replaced TopLayer is not even read, as in msprobe.
  r = RulesOk("TopLayer:\nCell:\n  c: d\n");
  EXPECT_EQ((*r.Find("TopLayer", "c"))[0].target, "d");
  EXPECT_NE(RulesError("Cell: text\n").find("'Cell' has no rules"),
            std::string::npos);
}

TEST(LayerRulesTest, EmptyAndNonStringFilesAreErrorsAsInMsprobe) {
  EXPECT_TRUE(RulesOk("{}\n").rules.empty());
  EXPECT_TRUE(RulesOk("A: {}\n").rules.at("A").empty());
  // msprobe's ERR_layer_mapping_* cases, each a Python exception there.
  EXPECT_NE(RulesError("").find("lm.yaml: empty"), std::string::npos);
  EXPECT_NE(RulesError("# nothing\n").find("empty"), std::string::npos);
  EXPECT_NE(RulesError("- a\n- b\n").find("a list"), std::string::npos);
  EXPECT_NE(RulesError("Block:\n").find("line 1: 'Block' has no rules (null)"),
            std::string::npos);
  EXPECT_NE(RulesError("Block:\n  0: x\n")
                .find("line 2: the rule '0' under 'Block' is an int in YAML, "
                      "not a string. Note: quote it ('0')"),
            std::string::npos);
  EXPECT_NE(RulesError("Block:\n  a: 1.5\n")
                .find("target '1.5' under "
                      "'Block' is a float"),
            std::string::npos);
  EXPECT_NE(RulesError("Block:\n  a: yes\n").find("is a bool"),
            std::string::npos);
  EXPECT_NE(RulesError("Block:\n  a:\n")
                .find("target '' under 'Block' is "
                      "null"),
            std::string::npos);
  EXPECT_NE(RulesError("Block: [a]\n").find("'['"), std::string::npos);
  // Quoted, they are strings; a type YAML types as no string matches none
  // (but its rules must still be valid, as msprobe prepares them all).
  LayerRules r = RulesOk("Block:\n  '0': '1'\n1:\n  a: b\n");
  EXPECT_EQ((*r.Find("Block", "0"))[0].target, "1");
  EXPECT_EQ(r.rules.count("1"), 0u);
  EXPECT_NE(RulesError("1:\n").find("'1' has no rules"), std::string::npos);
}

TEST(LayerRulesTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadLayerRules("/nonexistent/lm.yaml").status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace lockstep
