// The model in the HTML report's data: the module tree with each module's
// worst row (schemas in html_internal.h), and where the steps change.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "html_internal.h"
#include "json_util.h"

namespace lockstep::internal {
namespace {

// What a module's rows come to.
struct Worst {
  int64_t rows = 0;
  Verdict verdict = Verdict::kPass;
  double error = std::nan("");  // the largest row error (NaN: none known)
  int64_t row = -1;             // the first row of `verdict`
  int64_t first = -1;           // the first row

  void Add(const Worst& o) {
    if (o.rows == 0) return;
    rows += o.rows;
    if (row < 0 || Severity(o.verdict) > Severity(verdict) ||
        (Severity(o.verdict) == Severity(verdict) && o.row < row)) {
      verdict = o.verdict;
      row = o.row;
    }
    if (!std::isnan(o.error) && !(o.error <= error)) error = o.error;
    if (first < 0 || o.first < first) first = o.first;
  }
  void AddRow(const CompareRow& r, int64_t i) {
    Worst one;
    one.rows = 1;
    one.verdict = r.verdict;
    one.error = r.error;
    one.row = one.first = i;
    Add(one);
  }
};

// Nodes ordered deepest first, so that adding each to its parent in this
// order sums whole subtrees. Each depth is found once (a walk up stops at a
// node whose depth is known), so a chain of any depth costs linear time.
// REQUIRES: parents form a forest.
std::vector<int32_t> DeepestFirst(const std::vector<ModuleNode>& nodes) {
  std::vector<int32_t> depth(nodes.size(), -1), order(nodes.size()), walk;
  for (size_t n = 0; n < nodes.size(); ++n) {
    int32_t up = static_cast<int32_t>(n);
    for (; up >= 0 && depth[up] < 0; up = nodes[up].parent) walk.push_back(up);
    int32_t d = up >= 0 ? depth[up] : -1;
    for (; !walk.empty(); walk.pop_back()) depth[walk.back()] = ++d;
    order[n] = static_cast<int32_t>(n);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return depth[a] > depth[b]; });
  return order;
}

template <typename F>
void Column(JsonWriter* w, const char* key, size_t n, F f) {
  w->Key(key);
  w->StartArray();
  for (size_t i = 0; i < n; ++i) f(i);
  w->EndArray();
}

void WriteWorst(const Worst& s, JsonWriter* w) {
  w->StartObject();
  w->Key("rows");
  w->Int64(s.rows);
  w->Key("verdict");
  w->Int(static_cast<int>(s.verdict));
  w->Key("error");
  WritePlotNumber(w, s.error);
  w->Key("row");
  w->Int64(s.row);
  w->EndObject();
}

}  // namespace

void WriteStepMarks(const CompareResult& r, JsonWriter* w) {
  std::vector<std::pair<size_t, int>> marks;
  for (size_t i = 0; i < r.rows.size() && marks.size() <= kMaxStepMarks; ++i) {
    if (i == 0 || r.rows[i].step != r.rows[i - 1].step)
      marks.emplace_back(i, r.rows[i].step);
  }
  w->StartArray();
  if (marks.size() > 1 && marks.size() <= kMaxStepMarks) {
    for (const auto& [row, step] : marks) {
      w->StartArray();
      w->Uint64(row);
      w->Int(step);
      w->EndArray();
    }
  }
  w->EndArray();
}

int32_t DivergenceModule(const CompareResult& r) {
  const FirstDivergence& fd = r.first_divergence;
  if (!fd.found || fd.row_index >= r.rows.size()) return -1;
  const CompareRow& row = r.rows[fd.row_index];
  // A missing entry's row is the target entry next to it: not its module.
  if (row.entry != fd.entry) return -1;
  return row.module >= 0 && static_cast<size_t>(row.module) < r.modules.size()
             ? row.module
             : -1;
}

int ModuleTreeStep(const CompareResult& r) {
  const FirstDivergence& fd = r.first_divergence;
  if (r.modules.empty() || !fd.found || fd.step < 0) return -1;
  for (const CompareRow& row : r.rows) {
    if (row.step != fd.step) return fd.step;
  }
  return -1;  // one step only: the same tree
}

namespace {

// Each module's worst row over its subtree, and the rows in no module;
// only the rows of `step` when it is not -1.
std::pair<std::vector<Worst>, Worst> Aggregate(
    const CompareResult& r, const std::vector<int32_t>& order, int step) {
  const std::vector<ModuleNode>& nodes = r.modules;
  std::vector<Worst> agg(nodes.size());
  Worst outside;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (step != -1 && r.rows[i].step != step) continue;
    int32_t m = r.rows[i].module;
    (m >= 0 && static_cast<size_t>(m) < nodes.size() ? agg[m] : outside)
        .AddRow(r.rows[i], static_cast<int64_t>(i));
  }
  for (int32_t n : order) {
    if (nodes[n].parent >= 0) agg[nodes[n].parent].Add(agg[n]);
  }
  return {std::move(agg), outside};
}

}  // namespace

void WriteModules(const CompareResult& r, JsonWriter* w) {
  const std::vector<ModuleNode>& nodes = r.modules;
  if (nodes.empty()) {
    w->Null();
    return;
  }
  std::vector<int32_t> order = DeepestFirst(nodes);
  // Named references, not a structured binding: lambdas capture these
  // (clang before 16 refuses to capture a binding).
  const auto whole = Aggregate(r, order, -1);
  const auto& agg = whole.first;
  const auto& outside = whole.second;
  size_t n = nodes.size();
  w->StartObject();
  Column(w, "path", n, [&](size_t i) { JsonString(w, nodes[i].path); });
  Column(w, "cls", n, [&](size_t i) { JsonString(w, nodes[i].cls); });
  Column(w, "parent", n, [&](size_t i) { w->Int(nodes[i].parent); });
  Column(w, "rows", n, [&](size_t i) { w->Int64(agg[i].rows); });
  Column(w, "verdict", n,
         [&](size_t i) { w->Int(static_cast<int>(agg[i].verdict)); });
  Column(w, "error", n, [&](size_t i) { WritePlotNumber(w, agg[i].error); });
  Column(w, "row", n, [&](size_t i) { w->Int64(agg[i].row); });
  Column(w, "first", n, [&](size_t i) { w->Int64(agg[i].first); });
  w->Key("fd");
  w->Int(DivergenceModule(r));
  w->Key("outside");
  if (outside.rows > 0) {
    WriteWorst(outside, w);
  } else {
    w->Null();
  }
  // The first divergence's step alone, which the tree shows first (later
  // steps often differ everywhere): the same columns, "step_" in front.
  int step = ModuleTreeStep(r);
  if (step >= 0) {
    const auto of_step = Aggregate(r, order, step);
    const auto& at = of_step.first;
    const auto& out = of_step.second;
    w->Key("step");
    w->Int(step);
    Column(w, "step_rows", n, [&](size_t i) { w->Int64(at[i].rows); });
    Column(w, "step_verdict", n,
           [&](size_t i) { w->Int(static_cast<int>(at[i].verdict)); });
    Column(w, "step_error", n,
           [&](size_t i) { WritePlotNumber(w, at[i].error); });
    Column(w, "step_row", n, [&](size_t i) { w->Int64(at[i].row); });
    w->Key("step_outside");
    if (out.rows > 0) {
      WriteWorst(out, w);
    } else {
      w->Null();
    }
  }
  w->EndObject();
}

}  // namespace lockstep::internal
