// What a report shows of the model around the rows: the module tree (from
// construct.json's parent links and the Module.* entries' names) with each
// row attributed to its module, and the first divergence's call stack
// (stack.json).
//
// A row's module: a Module.* entry's own module; another entry's parent in
// construct.json (msprobe records operators' parents at level mix) when that
// parent is a module (or a phase such as "optimizer"); else none. A module's
// parent: the construct.json parent of its forward calls (backward hooks
// nest by timing, not by structure), else the module whose path is the
// longest dotted prefix of its own ("layer1.0" for "layer1.0.conv1"), else
// none (a root). Calls, steps and ranks of one module are one node.
// Thread safety: ModuleTreeBuilder is not synchronized; the function is
// pure but for reading a file.
#ifndef LOCKSTEP_COMPARE_MODEL_CONTEXT_H_
#define LOCKSTEP_COMPARE_MODEL_CONTEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "lockstep/compare/result.h"
#include "lockstep/format/module_parents.h"

namespace lockstep {

// Builds result->modules and the rows' `module`, one rank pair at a time.
class ModuleTreeBuilder {
 public:
  // REQUIRES: `result` outlives the builder; its rows are only appended to.
  explicit ModuleTreeBuilder(CompareResult* result) : result_(result) {}

  // Attributes rows [first, result->rows.size()) (one rank pair) to modules,
  // with that pair's construct.json (`parents`, nullptr when there is none).
  void AddRows(const ModuleParents* parents, size_t first) {
    AddRows(parents, first, result_->rows.size());
  }
  // Rows [first, end) (a pair's rows placed before the builder sees them).
  // REQUIRES: first <= end <= result->rows.size().
  void AddRows(const ModuleParents* parents, size_t first, size_t end);

  // Links every module to its parent, in time linear in the modules (a
  // parent chain of any depth). Call once, after the last AddRows.
  void Finish();

 private:
  int32_t NodeOf(std::string path, std::string cls);
  // The module a construct.json parent names (-1 for "").
  int32_t NodeOfParent(std::string_view name);
  int32_t PrefixParent(const std::string& path) const;

  CompareResult* result_;
  std::unordered_map<std::string, int32_t> index_;  // path -> node
  std::unordered_map<int32_t, int32_t> link_;       // node -> construct parent
};

// Sets result->first_divergence.stack from the stack.json of its step and
// rank (result->stack_files) when one names its entry. A stack.json that
// cannot be read leaves the stack empty and adds a warning.
void AttachDivergenceStack(CompareResult* result);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_MODEL_CONTEXT_H_
