// msprobe compare's `-lm [FILE]` (layer mapping; msprobe's
// python/msprobe/core/compare/layer_mapping/): which baseline row each
// target row is compared with, found from the model's structure instead of
// the rows' names. msprobe then compares with this data mapping exactly as
// with `-dm`.
//
// Each dump.json entry gets a scope path from its name, its parent in
// construct.json and, for an API, the framework function that called it in
// stack.json ("Cell.net.layers.0.attention.cos", "TopLayer.__getitem__.
// __add__"); backward entries take their forward's path, and the layers
// below a dumped ParallelTransformer are renumbered from 0. The paths of
// each dump make a tree. A target entry's path is walked from the root,
// each step renamed by the rule file's rules for the type of the node it
// leaves (the identity when none applies), and the baseline entry at the
// renamed path, in the same direction (forward, backward, parameters_grad)
// and with the same ordinal among that node's entries, is its partner.
// Rows then pair within paired entries by identical suffix (".input.0",
// ".output.1", ".parameters.weight"), else with "N/A".
//
// Thread safety: pure functions over files that are only read.
#ifndef LOCKSTEP_COMPARE_LAYER_MAPPING_H_
#define LOCKSTEP_COMPARE_LAYER_MAPPING_H_

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

// What a target row or entry without a partner maps to, as msprobe writes.
inline constexpr char kLayerNoPartner[] = "N/A";

// One rule of a layer mapping file: below a node of some type, the child
// path `key` (one or more dot-separated levels) of the target becomes
// `target` (one or more levels) in the baseline.
struct LayerRule {
  std::string key;     // "reduce_from_mp_region.all_reduce"
  std::string target;  // "all_reduce" (the text before any '(')
  size_t levels = 1;   // dot-separated parts of `key`
};

// A layer mapping file, prepared as msprobe prepares it. Copyable value.
struct LayerRules {
  // Type name ("TopLayer" for the root; the file's legacy "Cell" key is
  // read as "TopLayer") -> first part of a key -> its rules, the most
  // levels first, then in file order.
  std::map<std::string, std::map<std::string, std::vector<LayerRule>>> rules;

  // The rules, most levels first, whose key starts with the child `child`
  // of a node of type `type`; nullptr if none.
  const std::vector<LayerRule>* Find(std::string_view type,
                                     std::string_view child) const;
};

// Parses a layer mapping file:
//   TopLayer:                      # or Cell:, the root's legacy name
//     network_with_loss: module
//   ParallelAttention:
//     flash_attention_score: core_attention_flash.npu_fusion_attention
//   FusedRMSNorm:
//     RmsNorm: npu_rms_norm(any note)
// Accepted where msprobe accepts the file, with YAML's types as PyYAML
// gives them: `{}` is no rules; a top-level key that YAML types as no
// string (`1:`) matches no type, but its rules must be valid; `Cell:` with
// nothing under it is ignored; a `Cell` key replaces a `TopLayer` one. A
// key repeated within a mapping is refused (PyYAML keeps the last).
// Errors (Corruption naming `subject` and the line, where msprobe raises a
// Python exception): an empty file, a top level that is not a mapping, a
// type without rules or with a scalar, a rule key or value YAML types as no
// string (`0: x`; quote it), and what ParseYamlTwoLevel refuses.
StatusOr<LayerRules> ParseLayerRules(std::string_view text,
                                     std::string_view subject);

// Reads and parses the file at `path`. Errors: NotFound/IoError, or as
// above.
StatusOr<LayerRules> ReadLayerRules(const std::string& path);

// The files of one side: its dump.json, and the stack.json and
// construct.json that msprobe reads from the same folder.
struct LayerSide {
  std::string dump_json;
  std::string stack_json;
  std::string construct_json;
};

// The side whose stack.json and construct.json sit beside `dump_json`.
LayerSide LayerSideOf(const std::string& dump_json);

// {target name: baseline name or kLayerNoPartner}, in target order.
using LayerPairs = std::vector<std::pair<std::string, std::string>>;

// The entry-level mapping (msprobe's generate_api_mapping_by_layer_mapping):
// one pair per target dump.json entry, in dump order. `rules` nullptr (`-lm`
// without a file) is no rules: structure alone.
//
// A side with neither stack.json nor construct.json, or with either one
// holding `{}`, has no entries here: the target then gives an empty
// mapping, the baseline "N/A" for every target entry.
// REQUIRES: nothing; `rules` may be nullptr and is only read during the
// call.
// Errors: NotFound for one of stack.json and construct.json present
// without the other; Corruption for a dump.json whose framework is neither
// MindSpore nor PyTorch (no "framework" field and no tensor type to tell),
// an entry name of fewer than 4 dot-separated parts, a construct.json
// parent with a dot but fewer than 4 parts, or that is not a string or
// null (Megatron's [parent, micro_step] pairs are read), a stack.json
// stack that is not a list of strings or holds a frame without `File ...,
// line ..., in <function>` parts; and the readers' errors
// (format/dump_reader.h). All name the file and the entry.
StatusOr<LayerPairs> LayerEntryMapping(const LayerSide& target,
                                       const LayerSide& baseline,
                                       const LayerRules* rules);

// The row-level data mapping msprobe's `-lm` compares with (its
// generate_data_mapping_by_layer_mapping): for each pair of
// LayerEntryMapping, each row of the target entry (compare/op_rows.h's
// rows, in their order) maps to the baseline entry's row with the same
// text after the entry's name, else to kLayerNoPartner. In target order; a
// row name given twice keeps its first place and its last partner. Empty
// when LayerEntryMapping is: then msprobe compares as without `-lm`.
// Errors as LayerEntryMapping.
StatusOr<LayerPairs> LayerDataMapping(const LayerSide& target,
                                      const LayerSide& baseline,
                                      const LayerRules* rules);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_LAYER_MAPPING_H_
