#include "lockstep/compare/collective_links.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace lockstep {
namespace {

std::string RankList(const std::vector<int64_t>& ranks) {
  std::string out = "[";
  for (size_t i = 0; i < ranks.size(); ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "]";
}

// The key that is equal on every member of one operation; "" when the call
// can be linked with nothing. A group of every rank of the step is the
// default group.
std::string LinkKey(const CollectiveCall& c, int64_t rank,
                    const std::string& world) {
  switch (c.flow) {
    case CollectiveFlow::kSend:
      if (c.peer < 0) return "";
      return "p2p " + std::to_string(rank) + ">" + std::to_string(c.peer);
    case CollectiveFlow::kRecv:
      if (c.peer < 0) return "";
      return "p2p " + std::to_string(c.peer) + ">" + std::to_string(rank);
    default:
      return c.api + " " + (c.group == world ? "world" : c.group);
  }
}

// Orders the operations of one step: Lamport layers, released in call
// order on every rank.
class Scheduler {
 public:
  Scheduler(const std::vector<RankCollectives>& comms,
            const std::vector<size_t>& ranks, CollectiveLinks* links)
      : comms_(comms), ranks_(ranks), links_(links) {
    arrived_.assign(links->ops.size(), 0);
    assigned_.assign(links->ops.size(), false);
  }

  // Returns false when calls had to be released out of line.
  bool Run() {
    for (size_t i : ranks_) Arrive(i);
    bool in_line = true;
    for (;;) {
      while (!ready_.empty()) {
        size_t op = ready_.back();
        ready_.pop_back();
        Assign(op);
      }
      auto stuck = std::find_if(ranks_.begin(), ranks_.end(), [&](size_t i) {
        return ptr(i) < comms_[i].calls.size();
      });
      if (stuck == ranks_.end()) return in_line;
      in_line = false;
      Assign(links_->op[*stuck][ptr(*stuck)]);
    }
  }

 private:
  size_t& ptr(size_t i) { return ptr_[i]; }

  // Rank i has reached its next call (skipping calls of operations already
  // released without it).
  void Arrive(size_t i) {
    while (ptr(i) < comms_[i].calls.size()) {
      size_t op = links_->op[i][ptr(i)];
      if (!assigned_[op]) {
        if (++arrived_[op] == links_->ops[op].members.size())
          ready_.push_back(op);
        return;
      }
      int layer = std::max(clock_[i] + 1, links_->ops[op].layer);
      links_->layer[i][ptr(i)] = layer;
      clock_[i] = layer;
      ++ptr(i);
    }
  }

  // Runs `op` with the members that have reached it.
  void Assign(size_t op) {
    CollectiveOp& o = links_->ops[op];
    int layer = 0;
    std::vector<size_t> here;
    for (const CallRef& m : o.members) {
      if (ptr(m.rank_index) != m.call) continue;
      here.push_back(m.rank_index);
      layer = std::max(layer, clock_[m.rank_index] + 1);
    }
    o.layer = layer;
    assigned_[op] = true;
    for (size_t i : here) {
      links_->layer[i][ptr(i)] = layer;
      clock_[i] = layer;
      ++ptr(i);
      Arrive(i);
    }
  }

  const std::vector<RankCollectives>& comms_;
  const std::vector<size_t>& ranks_;
  CollectiveLinks* links_;
  std::map<size_t, size_t> ptr_;
  std::map<size_t, int> clock_;
  std::vector<size_t> arrived_;
  std::vector<bool> assigned_;
  std::vector<size_t> ready_;
};

// Makes the operations of one step (members found by key and ordinal).
void MatchStep(const std::vector<RankCollectives>& comms,
               const std::vector<size_t>& ranks, CollectiveLinks* links,
               std::vector<std::string>* warnings) {
  std::vector<int64_t> all;
  for (size_t i : ranks) all.push_back(comms[i].rank);
  const std::string world = RankList(all);
  std::map<std::pair<std::string, int>, size_t> op_of_key;
  for (size_t i : ranks) {
    std::map<std::string, int> count;
    for (size_t j = 0; j < comms[i].calls.size(); ++j) {
      const CollectiveCall& c = comms[i].calls[j];
      std::string key = LinkKey(c, comms[i].rank, world);
      size_t op = links->ops.size();
      if (key.empty()) {
        warnings->push_back("step " + std::to_string(comms[i].step) + " rank " +
                            std::to_string(comms[i].rank) + ": " + c.entry +
                            " names no peer rank; it is linked with no other "
                            "rank's call");
      } else {
        auto [it, made] = op_of_key.try_emplace({key, count[key]++}, op);
        op = it->second;
      }
      if (op == links->ops.size()) links->ops.push_back({comms[i].step, 0, {}});
      links->ops[op].members.push_back({i, j});
      links->op[i][j] = op;
    }
  }
}

// Sorts the operations by (step, layer, lowest member rank) and renumbers
// the references to them.
void SortOps(const std::vector<RankCollectives>& comms,
             CollectiveLinks* links) {
  std::vector<size_t> order(links->ops.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](size_t k) {
    const CollectiveOp& o = links->ops[k];
    return std::make_tuple(o.step, o.layer,
                           comms[o.members.front().rank_index].rank);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<size_t> new_index(order.size());
  std::vector<CollectiveOp> ops;
  ops.reserve(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    new_index[order[k]] = k;
    ops.push_back(std::move(links->ops[order[k]]));
  }
  links->ops = std::move(ops);
  for (auto& per_rank : links->op)
    for (size_t& op : per_rank) op = new_index[op];
}

}  // namespace

CollectiveLinks LinkCollectives(const std::vector<RankCollectives>& comms,
                                std::vector<std::string>* warnings) {
  CollectiveLinks links;
  std::map<int64_t, std::vector<size_t>> by_step;
  for (size_t i = 0; i < comms.size(); ++i) {
    by_step[comms[i].step].push_back(i);
    links.layer.emplace_back(comms[i].calls.size(), 0);
    links.op.emplace_back(comms[i].calls.size(), 0);
  }
  for (auto& [step, ranks] : by_step) {
    std::stable_sort(ranks.begin(), ranks.end(), [&](size_t a, size_t b) {
      return comms[a].rank < comms[b].rank;
    });
    MatchStep(comms, ranks, &links, warnings);
    if (!Scheduler(comms, ranks, &links).Run()) {
      warnings->push_back(
          "step " + std::to_string(step) +
          ": the ranks' collective calls do not line up (a rank waits at a "
          "call that another member of its group never makes); they were "
          "ordered rank by rank, and the origin across ranks may be "
          "approximate");
    }
  }
  SortOps(comms, &links);
  return links;
}

}  // namespace lockstep
