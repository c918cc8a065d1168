// The scope path of each dump.json entry for `-lm` (layer_mapping.h):
// msprobe's DumpDataItem (data_scope_parser.py) and its two post-passes
// (postprocess_pass.py). Private to the compare layer.
// Thread safety: pure functions.
#ifndef LOCKSTEP_SRC_COMPARE_LAYER_SCOPE_H_
#define LOCKSTEP_SRC_COMPARE_LAYER_SCOPE_H_

#include <string>
#include <string_view>
#include <vector>

#include "lockstep/compare/layer_mapping.h"
#include "lockstep/core/status.h"
#include "lockstep/format/pyvalue.h"

namespace lockstep::layer_detail {

// One dump.json entry, placed in the model's structure.
struct LayerItem {
  std::string name;       // "Mint.cos.0.forward"
  std::string type_name;  // "cos"; a cell's class: "ParallelAttention"
  std::string state;      // "forward", "backward", "parameters_grad"
  // "Cell.network.layers.0.attention.cos": the path in the scope tree
  // (its first part, Cell / Module / TopLayer, is the root).
  std::string full_scope;
  std::vector<std::string> rows;  // its rows' names (compare/op_rows.h)
};

// The entries of one side in dump order, with their scopes and rows. Empty
// when the side has neither stack.json nor construct.json, or either one
// is empty (`{}`), as in msprobe. Errors: as LayerEntryMapping's.
StatusOr<std::vector<LayerItem>> ReadLayerItems(const LayerSide& side);

// Python's s.split('.'): empty parts kept, at least one part.
std::vector<std::string_view> SplitDots(std::string_view s);

// The framework function (the last framework frame below the API's
// template) an API was called from, from its stack.json stack; "" when
// there is none. `subject` names the entry in errors: a stack that is not
// a list of strings, a frame without `in <function>` (layer_stack.cc).
StatusOr<std::string> FrameworkFunction(const PyValue& stack, bool mindspore,
                                        std::string_view subject);

// msprobe's renumber_index_pass for ParallelTransformer: the part after
// each dumped ParallelTransformer's "<its scope>.layers" in every scope
// becomes its number less the smallest such number (layer_renumber.cc).
void RenumberParallelLayers(std::vector<LayerItem>* items);

}  // namespace lockstep::layer_detail

#endif  // LOCKSTEP_SRC_COMPARE_LAYER_SCOPE_H_
