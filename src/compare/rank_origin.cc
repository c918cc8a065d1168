#include "lockstep/compare/rank_origin.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "lockstep/compare/collective_links.h"
#include "lockstep/compare/collectives.h"
#include "lockstep/compare/first_divergence.h"

namespace lockstep {
namespace {

bool Differs(const CompareRow& r) {
  if (r.verdict == Verdict::kUnmatched) return true;
  if (!std::isnan(r.error)) return r.error > r.floor;
  return r.verdict != Verdict::kPass;
}

struct Range {
  size_t begin = SIZE_MAX, end = 0;
  bool empty() const { return begin >= end; }
};

// Since when a rank's data differs: before its calls of a later (step,
// layer); `root` is the candidate it descends from.
struct Dirt {
  int64_t step;
  int layer;
  int root;
};

// (step, layer, rank): the order of candidates.
using Position = std::tuple<int64_t, int, int>;

class OriginFinder {
 public:
  OriginFinder(const std::vector<CompareRow>& rows,
               const std::vector<AlignmentGap>& gaps,
               const std::vector<RankCollectives>& comms,
               std::vector<std::string>* warnings)
      : rows_(rows),
        gaps_(gaps),
        comms_(comms),
        links_(LinkCollectives(comms, warnings)) {
    for (size_t i = 0; i < comms.size(); ++i) {
      index_[{comms[i].step, comms[i].rank}] = i;
      call_rows_.emplace_back(comms[i].calls.size());
    }
    IndexRows();
  }

  const std::vector<bool>& ignored_inputs() const { return ignored_; }

  RankOrigin Find(const std::vector<FirstDivergence>& firsts,
                  FirstDivergence* divergence) {
    RankOrigin o;
    o.analyzed = true;
    std::map<Position, const FirstDivergence*> candidates;
    for (const FirstDivergence& f : firsts) {
      std::optional<int> layer = CandidateLayer(f);
      if (layer) candidates[{f.step, *layer, f.rank}] = &f;
    }
    if (candidates.empty()) {
      *divergence = Fallback();
      if (!divergence->found) {  // the earliest failing row, if any
        *divergence = FindFirstDivergence(rows_, gaps_, &ignored_);
        return o;
      }
      candidates[{divergence->step, fallback_layer_, divergence->rank}] =
          divergence;
    } else {
      *divergence = *candidates.begin()->second;
    }
    const FirstDivergence& f = *divergence;
    o.found = true;
    o.rank = f.rank;
    o.step = f.step;
    o.entry = f.entry;
    o.reason = f.reason;
    o.detail = f.detail;
    o.row_index = f.row_index;
    for (const auto& [pos, c] : candidates) {
      dirt_[c->rank] = {std::get<0>(pos), std::get<1>(pos), c->rank};
      if (c->rank != f.rank)
        o.others.push_back({c->rank, c->step, c->entry, c->rank});
    }
    for (const OriginHop& h : Propagate())
      if (dirt_[h.rank].root == f.rank) o.path.push_back(h);
    return o;
  }

 private:
  std::optional<size_t> CommIndex(int64_t step, int64_t rank) const {
    auto it = index_.find({step, rank});
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  // Rows of every (step, rank), and of every collective call; the receive
  // buffers among the calls' inputs.
  void IndexRows() {
    ignored_.assign(rows_.size(), false);
    std::vector<std::unordered_map<std::string_view, size_t>> call_of(
        comms_.size());
    for (size_t i = 0; i < comms_.size(); ++i)
      for (size_t j = 0; j < comms_[i].calls.size(); ++j)
        call_of[i].emplace(comms_[i].calls[j].entry, j);
    Range* rr = nullptr;  // the current (step, rank)'s
    std::optional<size_t> i;
    for (size_t r = 0; r < rows_.size(); ++r) {
      const CompareRow& row = rows_[r];
      if (r == 0 || row.step != rows_[r - 1].step ||
          row.rank != rows_[r - 1].rank) {  // rows come a pair at a time
        rr = &rank_rows_[{row.step, row.rank}];
        i = CommIndex(row.step, row.rank);
      }
      rr->begin = std::min(rr->begin, r);
      rr->end = std::max(rr->end, r + 1);
      if (!i || !IsCollectiveEntry(row.entry)) continue;
      auto it = call_of[*i].find(row.entry);
      if (it == call_of[*i].end()) continue;
      Range& cr = call_rows_[*i][it->second];
      cr.begin = std::min(cr.begin, r);
      cr.end = std::max(cr.end, r + 1);
      const CollectiveCall& call = comms_[*i].calls[it->second];
      ignored_[r] = row.is_input && row.is_tensor &&
                    !IsCollectiveDataInput(call, row.rank, row.npu_name());
    }
  }

  // The number of calls of comms_[i] before row `r` (a call's own rows
  // count as after it).
  size_t CallsBefore(size_t i, size_t r) const {
    size_t n = 0;
    while (n < call_rows_[i].size() && call_rows_[i][n].end <= r) ++n;
    return n;
  }

  int LayerBefore(size_t i, size_t calls) const {
    return calls == 0 ? 0 : links_.layer[i][calls - 1];
  }

  // The layer of a rank's first divergence when it is a candidate; nullopt
  // when it is a receipt.
  std::optional<int> CandidateLayer(const FirstDivergence& f) const {
    std::optional<size_t> i = CommIndex(f.step, f.rank);
    if (!i) return 0;
    size_t before = CallsBefore(*i, f.row_index);
    bool in_call = before < call_rows_[*i].size() &&
                   call_rows_[*i][before].begin <= f.row_index &&
                   f.row_index < call_rows_[*i][before].end;
    if (in_call && f.reason != DivergenceReason::kMissing &&
        !rows_[f.row_index].is_input) {
      return std::nullopt;  // a receipt
    }
    return LayerBefore(*i, before);
  }

  bool AnyRow(const Range& r, bool input, size_t i, size_t j) const {
    for (size_t k = r.begin; k < r.end; ++k) {
      const CompareRow& row = rows_[k];
      if (input ? !row.is_input || ignored_[k] || !row.is_tensor ||
                      !IsCollectiveDataInput(comms_[i].calls[j], row.rank,
                                             row.npu_name())
                : row.is_input) {
        continue;
      }
      if (Differs(row)) return true;
    }
    return false;
  }
  bool InputDiffers(const CallRef& m) const {
    return AnyRow(call_rows_[m.rank_index][m.call], true, m.rank_index, m.call);
  }
  bool OutputDiffers(const CallRef& m) const {
    return AnyRow(call_rows_[m.rank_index][m.call], false, m.rank_index,
                  m.call);
  }

  // Whether member m sends data (s) or receives it (!s) in its operation.
  bool Sends(const CallRef& m, bool s) const {
    const CollectiveCall& c = comms_[m.rank_index].calls[m.call];
    bool root = c.root < 0 || c.root == comms_[m.rank_index].rank;
    switch (c.flow) {
      case CollectiveFlow::kAll:
        return true;
      case CollectiveFlow::kFromRoot:
        return s ? root : !root || c.root < 0;
      case CollectiveFlow::kToRoot:
        return s ? true : root;
      case CollectiveFlow::kSend:
        return s;
      case CollectiveFlow::kRecv:
        return !s;
      case CollectiveFlow::kNone:
        return false;
    }
    return false;
  }

  bool DirtyBefore(const CollectiveOp& op, const CallRef& m) const {
    auto it = dirt_.find(static_cast<int>(comms_[m.rank_index].rank));
    if (it == dirt_.end()) return false;
    const Dirt& d = it->second;
    int layer = links_.layer[m.rank_index][m.call];
    return d.step < op.step || (d.step == op.step && d.layer < layer);
  }

  std::vector<OriginHop> Propagate() {
    std::vector<OriginHop> hops;
    for (const CollectiveOp& op : links_.ops) {
      const CallRef* from = nullptr;
      for (const CallRef& m : op.members) {
        if (!Sends(m, true) || !DirtyBefore(op, m)) continue;
        if (from == nullptr || (InputDiffers(m) && !InputDiffers(*from)))
          from = &m;
      }
      if (from == nullptr) continue;
      int from_rank = static_cast<int>(comms_[from->rank_index].rank);
      for (const CallRef& m : op.members) {
        int rank = static_cast<int>(comms_[m.rank_index].rank);
        if (!Sends(m, false) || dirt_.count(rank) || !OutputDiffers(m))
          continue;
        dirt_[rank] = {op.step, op.layer, dirt_[from_rank].root};
        hops.push_back({rank, static_cast<int>(op.step),
                        comms_[m.rank_index].calls[m.call].entry, from_rank});
      }
    }
    return hops;
  }

  // No candidate: the earliest operation with a differing data input or
  // output (rule 4 of the header).
  FirstDivergence Fallback() {
    for (const CollectiveOp& op : links_.ops) {
      for (bool input : {true, false}) {
        for (const CallRef& m : op.members) {
          if (input ? !InputDiffers(m) : !OutputDiffers(m)) continue;
          fallback_layer_ = LayerBefore(m.rank_index, m.call);
          return input ? DriftBefore(m) : AtCall(m, op);
        }
      }
    }
    return {};
  }

  FirstDivergence At(size_t row, DivergenceReason reason, std::string detail,
                     bool drift) const {
    const CompareRow& r = rows_[row];
    FirstDivergence f;
    f.found = true;
    f.rank = r.rank;
    f.step = r.step;
    f.entry = r.entry;
    f.row = std::string(r.npu_name());
    f.reason = reason == DivergenceReason::kNone ? DivergenceReason::kPrecision
                                                 : reason;
    f.detail = std::move(detail);
    f.row_index = row;
    f.drift = drift;
    return f;
  }

  // Member m's earliest failing row since its previous call, else its
  // differing data input.
  FirstDivergence DriftBefore(const CallRef& m) const {
    const RankCollectives& rc = comms_[m.rank_index];
    const Range& call = call_rows_[m.rank_index][m.call];
    size_t begin = rank_rows_.at({rc.step, rc.rank}).begin;
    if (m.call > 0)
      begin = std::max(begin, call_rows_[m.rank_index][m.call - 1].end);
    std::string why = "its data input to " + rc.calls[m.call].entry +
                      " differs, and no single operator's error before it "
                      "exceeds what its inputs explain (drift)";
    for (size_t k = begin; k < call.begin; ++k) {
      if (rows_[k].verdict != Verdict::kPass)
        return At(k, rows_[k].reason, "the earliest failing row; " + why, true);
    }
    for (size_t k = call.begin; k < call.end; ++k) {
      if (rows_[k].is_input && !ignored_[k] && Differs(rows_[k]))
        return At(k, rows_[k].reason, why, true);
    }
    return At(call.begin, DivergenceReason::kPrecision, why, true);
  }

  FirstDivergence AtCall(const CallRef& m, const CollectiveOp& op) const {
    const Range& call = call_rows_[m.rank_index][m.call];
    size_t row = call.begin;
    for (size_t k = call.begin; k < call.end; ++k) {
      if (!rows_[k].is_input && Differs(rows_[k])) {
        row = k;
        break;
      }
    }
    return At(row, rows_[row].reason,
              "the collective returns different data from equal inputs on "
              "all " +
                  std::to_string(op.members.size()) +
                  " ranks it links (its reduction or algorithm differs)",
              false);
  }

  const std::vector<CompareRow>& rows_;
  const std::vector<AlignmentGap>& gaps_;
  const std::vector<RankCollectives>& comms_;
  CollectiveLinks links_;
  std::map<std::pair<int64_t, int64_t>, size_t> index_;
  std::map<std::pair<int64_t, int64_t>, Range> rank_rows_;
  std::vector<std::vector<Range>> call_rows_;
  std::vector<bool> ignored_;
  std::map<int, Dirt> dirt_;
  int fallback_layer_ = 0;
};

bool SeveralRanks(const std::vector<RankCollectives>& comms) {
  std::map<int64_t, std::set<int64_t>> ranks;
  for (const RankCollectives& c : comms) ranks[c.step].insert(c.rank);
  for (const auto& [step, set] : ranks)
    if (set.size() > 1) return true;
  return false;
}

}  // namespace

RankOrigin FindRankOrigin(const std::vector<CompareRow>& rows,
                          const std::vector<AlignmentGap>& gaps,
                          const std::vector<RankCollectives>& collectives,
                          std::vector<std::string>* warnings,
                          FirstDivergence* divergence) {
  *divergence = {};
  if (!SeveralRanks(collectives)) return {};
  OriginFinder finder(rows, gaps, collectives, warnings);
  std::vector<FirstDivergence> firsts =
      FindRankDivergences(rows, gaps, &finder.ignored_inputs());
  return finder.Find(firsts, divergence);
}

std::string RankRanges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ranks[i]);
    if (j > i) out += (j == i + 1 ? ", " : "..") + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace lockstep
