// Checkpoints as the rows of a tensor-mode compare: each entry becomes an
// OpRow (statistics computed from its tensor), rows are matched by name and
// go through CompareRankPair with the tensors taken from the checkpoints.
#include "lockstep/compare/checkpoint_compare.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <unordered_map>

#include "lockstep/compare/tensor_stats.h"
#include "lockstep/core/parallel.h"
#include "lockstep/core/progress.h"

namespace lockstep {
namespace checkpoint_compare_internal {

void SetStats(const Tensor& t, OpRow* r) {
  TensorStats s = ComputeTensorStats(t, 1);
  if (s.finite == 0) return;  // None, as a dump gives for no finite values
  r->stats = {PyValue::Float(s.max), PyValue::Float(s.min),
              PyValue::Float(Mean(s)), PyValue::Float(L2Norm(s))};
}

OpRow MakeOpRow(const CheckpointEntry& e, size_t index) {
  OpRow r;
  r.name = e.name;
  r.entry = e.name;
  r.entry_index = index;
  r.state = RowState::kParameters;
  r.requires_grad = "N/A";
  if (e.is_tensor) {
    r.is_tensor = true;
    r.dtype = std::string(TorchDTypeName(e.tensor.dtype()));
    r.shape = ShapeToString(e.tensor.shape());
    r.data_name = e.name;
    r.nbytes = static_cast<int64_t>(e.tensor.nbytes());
  } else {
    r.is_null = e.value.is_none();
    r.dtype = "<class '" + e.type_name + "'>";
    r.shape = "[]";
    r.stats[0] = e.value;
    r.data_name = "-1";
  }
  return r;
}

// The rows of a checkpoint, statistics computed on `jobs` threads.
std::vector<OpRow> MakeOpRows(const Checkpoint& c, int jobs) {
  std::vector<OpRow> rows;
  rows.reserve(c.entries.size());
  for (size_t i = 0; i < c.entries.size(); ++i)
    rows.push_back(MakeOpRow(c.entries[i], i));
  ParallelFor(rows.size(), std::max(1, jobs), [&](size_t i) {
    if (c.entries[i].is_tensor) SetStats(c.entries[i].tensor, &rows[i]);
  });
  return rows;
}

// match[i]: the baseline row named as target row i, or -1; baseline names
// the target lacks become gaps.
std::vector<int> MatchByName(const Checkpoint& t, const Checkpoint& b,
                             std::vector<AlignmentGap>* gaps) {
  std::unordered_map<std::string_view, int> by_name;
  for (size_t j = 0; j < b.entries.size(); ++j)
    by_name.emplace(b.entries[j].name, static_cast<int>(j));
  std::vector<int> match(t.entries.size(), -1);
  std::vector<bool> used(b.entries.size());
  for (size_t i = 0; i < t.entries.size(); ++i) {
    auto it = by_name.find(t.entries[i].name);
    if (it == by_name.end() || used[static_cast<size_t>(it->second)]) continue;
    match[i] = it->second;
    used[static_cast<size_t>(it->second)] = true;
  }
  for (size_t j = 0; j < b.entries.size(); ++j) {
    if (!used[j])
      gaps->push_back({b.entries[j].name, false, 0, j, -1, t.entries.size()});
  }
  return match;
}

int Severity(Verdict v) {
  switch (v) {
    case Verdict::kError:
      return 3;
    case Verdict::kUnmatched:
      return 2;
    case Verdict::kWarning:
      return 1;
    case Verdict::kPass:
      return 0;
  }
  return 0;
}

}  // namespace checkpoint_compare_internal

StatusOr<CompareResult> CompareCheckpoints(const Checkpoint& target,
                                           const Checkpoint& baseline,
                                           const CompareOptions& options) {
  using namespace checkpoint_compare_internal;
  for (const Checkpoint* c : {&target, &baseline}) {
    if (c->entries.empty())
      return Status::InvalidArgument(c->path, "the checkpoint holds nothing");
  }
  CompareResult result;
  result.subject = CompareSubject::kCheckpoints;
  result.mode = CompareMode::kTensor;
  result.columns = CompareHeader(CompareMode::kTensor, false);
  result.target_path = target.path;
  result.baseline_path = baseline.path;
  std::vector<OpRow> trows = MakeOpRows(target, options.jobs);
  std::vector<OpRow> brows = MakeOpRows(baseline, options.jobs);
  TimingMark("compare: checkpoint rows and statistics");
  std::vector<int> match = MatchByName(target, baseline, &result.gaps);
  CompareOptions opt = options;
  opt.row_tensor = [&](bool t, const OpRow& row) -> StatusOr<Tensor> {
    return (t ? target : baseline).entries[row.entry_index].tensor;
  };
  DumpFile tf, bf;  // no dump files: the tensors come from opt.row_tensor
  tf.path = target.path;
  bf.path = baseline.path;
  DumpPair pair{&tf, &bf, nullptr, -1, 0};
  pair.target_rows = &trows;
  pair.baseline_rows = &brows;
  pair.match = &match;
  LOCKSTEP_RETURN_IF_ERROR(CompareRankPair(pair, opt, &result));
  return result;
}

StatusOr<CompareResult> CompareCheckpointRows(const std::string& target,
                                              const std::string& baseline,
                                              const CompareOptions& options) {
  TimingMark("compare: start");
  StatusOr<Checkpoint> b = Status::Internal("unread");
  std::thread other([&] { b = ReadCheckpoint(baseline); });
  StatusOr<Checkpoint> t = ReadCheckpoint(target);
  other.join();
  TimingMark("compare: read both checkpoints");
  LOCKSTEP_RETURN_IF_ERROR(t.status());
  LOCKSTEP_RETURN_IF_ERROR(b.status());
  return CompareCheckpoints(*t, *b, options);
}

StatusOr<CompareResult> CompareCheckpointPaths(const std::string& target,
                                               const std::string& baseline,
                                               const CompareOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(CompareResult r,
                            CompareCheckpointRows(target, baseline, options));
  FinishResult(&r);
  return r;
}

std::vector<size_t> LargestErrors(const CompareResult& result, size_t n) {
  using checkpoint_compare_internal::Severity;
  std::vector<size_t> order;
  for (size_t i = 0; i < result.rows.size(); ++i) {
    const CompareRow& r = result.rows[i];
    if (r.verdict != Verdict::kPass || r.error > 0) order.push_back(i);
  }
  auto worse = [&](size_t a, size_t b) {
    const CompareRow& x = result.rows[a];
    const CompareRow& y = result.rows[b];
    if (Severity(x.verdict) != Severity(y.verdict))
      return Severity(x.verdict) > Severity(y.verdict);
    if (std::isnan(x.error) != std::isnan(y.error)) return std::isnan(y.error);
    if (!std::isnan(x.error) && x.error != y.error) return x.error > y.error;
    return a < b;
  };
  std::sort(order.begin(), order.end(), worse);
  if (order.size() > n) order.resize(n);
  return order;
}

}  // namespace lockstep
