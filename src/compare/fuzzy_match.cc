#include "lockstep/compare/fuzzy_match.h"

#include <algorithm>
#include <array>
#include <deque>
#include <unordered_map>

#include "lockstep/compare/matching.h"

namespace lockstep {
namespace {

constexpr char kForward[] = "forward";
constexpr char kBackward[] = "backward";

bool Contains(const std::string& s, const char* part) {
  return s.find(part) != std::string::npos;
}

// One dump entry: its rows [begin, end) and what the match looks at.
struct Entry {
  size_t begin = 0, end = 0;
  bool ambiguous = false;  // a name holds both "forward" and "backward"
  std::string key;         // equal for entries that can match (see KeyOf)
};

// The per-name part of the hash key: the renamed name, tagged by which
// rule renamed it (exact for unambiguous names; see FuzzyNamesMatch).
std::string CanonicalName(const std::string& name) {
  if (Contains(name, kForward)) return "F" + MsprobeRenameApi(name, kForward);
  if (Contains(name, kBackward)) return "B" + MsprobeRenameApi(name, kBackward);
  return "R" + name;
}

// dtype with the float16/float32/bfloat16 group collapsed (the group is
// interchangeable in the structure check).
std::string DTypeClass(const std::string& d) {
  if (DTypesComparable(d, "torch.float32")) return "~torch.float";
  if (DTypesComparable(d, "Float32")) return "~Float";
  return d;
}

// Entries with equal keys have matching names and, when their inputs are
// not empty, matching structures; FuzzyEntriesMatch decides the rest.
std::string KeyOf(const std::vector<OpRow>& rows, const Entry& e) {
  std::string key = std::to_string(e.end - e.begin);
  for (size_t i = e.begin; i < e.end; ++i) {
    const OpRow& r = rows[i];
    key += '\n';
    key += CanonicalName(r.name);
    key += '\t';
    key += static_cast<char>('0' + static_cast<int>(r.state));
    key += DTypeClass(r.dtype);
    key += '\t';
    key += r.shape;
  }
  return key;
}

std::vector<Entry> EntriesOf(const std::vector<OpRow>& rows) {
  std::vector<Entry> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == 0 || rows[i].entry_index != rows[i - 1].entry_index ||
        rows[i].entry != rows[i - 1].entry) {
      if (!out.empty()) out.back().end = i;
      out.push_back({i, i, false, {}});
    }
    const std::string& n = rows[i].name;
    if (Contains(n, kForward) && Contains(n, kBackward))
      out.back().ambiguous = true;
  }
  if (!out.empty()) out.back().end = rows.size();
  for (Entry& e : out) e.key = KeyOf(rows, e);
  return out;
}

// The (dtype, shape) list of one state, in row order.
using Struct = std::vector<const OpRow*>;
std::array<Struct, 4> StructsOf(const std::vector<OpRow>& rows,
                                const Entry& e) {
  std::array<Struct, 4> s;
  for (size_t i = e.begin; i < e.end; ++i)
    s[static_cast<size_t>(rows[i].state)].push_back(&rows[i]);
  return s;
}

bool StructsEqual(const Struct& a, const Struct& b, bool loose) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i]->shape != b[i]->shape) return false;
    bool same_type = loose ? DTypesComparable(a[i]->dtype, b[i]->dtype)
                           : a[i]->dtype == b[i]->dtype;
    if (!same_type) return false;
  }
  return true;
}

// msprobe 1.2.2's check_struct_match.
bool StructsMatch(const std::array<Struct, 4>& a,
                  const std::array<Struct, 4>& b) {
  bool exact = true;
  for (size_t k = 0; k < 4; ++k) exact = exact && StructsEqual(a[k], b[k], 0);
  if (exact) return true;
  if (a[0].empty() || b[0].empty()) return false;  // inputs can't be empty
  for (size_t k = 0; k < 4; ++k) {
    if (!StructsEqual(a[k], b[k], true)) return false;
  }
  return true;
}

// msprobe 1.2.2's check_op with fuzzy_match.
bool FuzzyEntriesMatch(const std::vector<OpRow>& t, const Entry& te,
                       const std::vector<OpRow>& b, const Entry& be) {
  if (te.end - te.begin != be.end - be.begin) return false;
  for (size_t i = 0; i < te.end - te.begin; ++i) {
    if (!FuzzyNamesMatch(t[te.begin + i].name, b[be.begin + i].name))
      return false;
  }
  return StructsMatch(StructsOf(t, te), StructsOf(b, be));
}

// One dump's queue: the entries [front, back) read and not yet consumed,
// indexed by key (ambiguous entries in a list of their own).
class Queue {
 public:
  Queue(const std::vector<OpRow>& rows, std::vector<Entry> entries)
      : rows_(rows), entries_(std::move(entries)) {}

  size_t size() const { return entries_.size(); }
  size_t front() const { return front_; }
  size_t back() const { return back_; }
  bool empty() const { return front_ == back_; }
  bool exhausted() const { return back_ == entries_.size(); }
  const Entry& at(size_t i) const { return entries_[i]; }
  const std::vector<OpRow>& rows() const { return rows_; }

  void Read() {
    const Entry& e = entries_[back_];
    (e.ambiguous ? ambiguous_ : by_key_[e.key]).push_back(back_);
    ++back_;
  }
  void DropThrough(size_t i) { front_ = i + 1; }

  // The first queued entry in [front, limit) that matches `probe` of
  // `other` (index `probe_i`), or -1.
  long FirstMatch(const Queue& other, size_t probe_i, size_t limit) {
    const Entry& probe = other.at(probe_i);
    std::vector<size_t> candidates;
    auto collect = [&](std::deque<size_t>* list) {
      while (!list->empty() && list->front() < front_) list->pop_front();
      for (size_t i : *list) {
        if (i >= limit) break;
        candidates.push_back(i);
      }
    };
    if (probe.ambiguous) {
      for (size_t i = front_; i < limit; ++i) candidates.push_back(i);
    } else {
      auto it = by_key_.find(probe.key);
      if (it != by_key_.end()) collect(&it->second);
      collect(&ambiguous_);
      std::sort(candidates.begin(), candidates.end());
    }
    for (size_t i : candidates) {
      if (FuzzyEntriesMatch(other.rows(), probe, rows_, entries_[i]))
        return static_cast<long>(i);
    }
    return -1;
  }

 private:
  const std::vector<OpRow>& rows_;
  std::vector<Entry> entries_;
  size_t front_ = 0, back_ = 0;
  std::unordered_map<std::string, std::deque<size_t>> by_key_;
  std::deque<size_t> ambiguous_;
};

// Pairs the rows of two matched entries by position within each state.
void PairRows(const std::vector<OpRow>& t, const Entry& te,
              const std::vector<OpRow>& b, const Entry& be,
              std::vector<int>* match) {
  std::array<Struct, 4> bs = StructsOf(b, be);
  std::array<size_t, 4> next{};
  for (size_t i = te.begin; i < te.end; ++i) {
    size_t k = static_cast<size_t>(t[i].state);
    if (next[k] >= bs[k].size()) continue;
    const OpRow* r = bs[k][next[k]++];
    (*match)[i] = static_cast<int>(r - b.data());
  }
}

}  // namespace

namespace {

// Python's name.split(process): the head before the first occurrence with
// its last two dot-separated fields dropped (rsplit(".", 2)[0]), and the
// text between the first and a second occurrence. False if none.
bool SplitAtProcess(const std::string& name, const std::string& process,
                    std::string* head, std::string* tail) {
  size_t p = name.find(process);
  if (p == std::string::npos) return false;
  *head = name.substr(0, p);
  size_t rest = p + process.size();
  size_t q = name.find(process, rest);
  *tail =
      name.substr(rest, q == std::string::npos ? std::string::npos : q - rest);
  for (int k = 0; k < 2; ++k) {  // Python's head.rsplit(".", 2)[0]
    size_t dot = head->rfind('.');
    if (dot == std::string::npos) break;
    head->resize(dot);
  }
  return true;
}

}  // namespace

std::string MsprobeRenameApi(const std::string& name,
                             const std::string& process) {
  std::string head, tail;
  if (!SplitAtProcess(name, process, &head, &tail)) return name;
  return head + tail;
}

std::string MsprobeHeadRenameApi(const std::string& name) {
  const char* process = Contains(name, kForward)    ? kForward
                        : Contains(name, kBackward) ? kBackward
                                                    : nullptr;
  std::string head, tail;
  if (process == nullptr || !SplitAtProcess(name, process, &head, &tail))
    return name;
  return head + "." + process + tail;
}

bool FuzzyNamesMatch(const std::string& a, const std::string& b) {
  if (Contains(a, kForward) && Contains(b, kForward))
    return MsprobeRenameApi(a, kForward) == MsprobeRenameApi(b, kForward);
  if (Contains(a, kBackward) && Contains(b, kBackward))
    return MsprobeRenameApi(a, kBackward) == MsprobeRenameApi(b, kBackward);
  return a == b;
}

namespace {

std::vector<int> StructureMatchRows(const std::vector<OpRow>& target,
                                    const std::vector<OpRow>& baseline) {
  std::vector<int> match(target.size(), -1);
  Queue tq(target, EntriesOf(target));
  Queue bq(baseline, EntriesOf(baseline));
  while (!tq.exhausted() || !bq.exhausted()) {
    if (!tq.exhausted()) tq.Read();
    if (!bq.exhausted()) bq.Read();
    // One queue empty: that dump ran out. Target entries still to come
    // stay unmatched (msprobe stops here); baseline ones are extra.
    if (tq.empty() || bq.empty()) {
      if (bq.empty()) break;
      continue;
    }
    size_t t_last = tq.back() - 1, b_last = bq.back() - 1;
    long b = bq.FirstMatch(tq, t_last, bq.back());
    long t = b >= 0 ? static_cast<long>(t_last) : -1;
    if (b < 0) {
      t = tq.FirstMatch(bq, b_last, t_last);
      b = t >= 0 ? static_cast<long>(b_last) : -1;
    }
    if (t < 0) continue;
    PairRows(target, tq.at(static_cast<size_t>(t)), baseline,
             bq.at(static_cast<size_t>(b)), &match);
    tq.DropThrough(static_cast<size_t>(t));
    bq.DropThrough(static_cast<size_t>(b));
  }
  return match;
}

// msprobe 26's process_fuzzy_match and match_op, then its dtype condition.
std::vector<int> MsprobeMatchRows(const std::vector<OpRow>& target,
                                  const std::vector<OpRow>& baseline) {
  std::vector<int> match(target.size(), -1);
  // The two dumps' renamed names share one numbering.
  std::unordered_map<std::string, int> ids;
  auto id = [&](const std::string& name) {
    return ids
        .try_emplace(MsprobeHeadRenameApi(name), static_cast<int>(ids.size()))
        .first->second;
  };
  std::vector<int> tkey(target.size()), bkey(baseline.size());
  for (size_t i = 0; i < target.size(); ++i) tkey[i] = id(target[i].name);
  for (size_t i = 0; i < baseline.size(); ++i) bkey[i] = id(baseline[i].name);
  // Per-queue lookups by the shared numbering.
  std::vector<std::deque<size_t>> tqueued(ids.size()), bqueued(ids.size());
  size_t tfront = 0, bfront = 0, tback = 0, bback = 0;
  auto first = [](std::deque<size_t>& q, size_t front) -> long {
    while (!q.empty() && q.front() < front) q.pop_front();
    return q.empty() ? -1 : static_cast<long>(q.front());
  };
  while (tback < target.size() || bback < baseline.size()) {
    if (tback < target.size()) {
      tqueued[static_cast<size_t>(tkey[tback])].push_back(tback);
      ++tback;
    }
    if (bback < baseline.size()) {
      bqueued[static_cast<size_t>(bkey[bback])].push_back(bback);
      ++bback;
    }
    bool t_empty = tfront == tback, b_empty = bfront == bback;
    if (t_empty != b_empty) break;  // one dump ran out
    // The newest target row in the baseline queue (its first such row),
    // else the newest baseline row in the target queue.
    long t = static_cast<long>(tback - 1);
    long b = first(bqueued[static_cast<size_t>(tkey[tback - 1])], bfront);
    if (b < 0) {
      b = static_cast<long>(bback - 1);
      t = first(tqueued[static_cast<size_t>(bkey[bback - 1])], tfront);
    }
    if (t < 0) continue;
    match[static_cast<size_t>(t)] = static_cast<int>(b);
    tfront = static_cast<size_t>(t) + 1;
    bfront = static_cast<size_t>(b) + 1;
  }
  for (size_t i = 0; i < target.size(); ++i) {
    int j = match[i];
    if (j >= 0 && !DTypesComparable(target[i].dtype,
                                    baseline[static_cast<size_t>(j)].dtype))
      match[i] = -1;
  }
  return match;
}

}  // namespace

std::vector<int> FuzzyMatchRows(const std::vector<OpRow>& target,
                                const std::vector<OpRow>& baseline,
                                FuzzyRule rule) {
  return rule == FuzzyRule::kStructures ? StructureMatchRows(target, baseline)
                                        : MsprobeMatchRows(target, baseline);
}

}  // namespace lockstep
