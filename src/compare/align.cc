#include "lockstep/compare/align.h"

#include <unordered_map>

#include "lockstep/compare/matching.h"

namespace lockstep {
namespace {

struct EntrySpan {
  std::string name;
  size_t begin = 0;  // first row
  size_t end = 0;    // one past the last row
};

std::vector<EntrySpan> Spans(const std::vector<OpRow>& rows) {
  std::vector<EntrySpan> spans;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (spans.empty() || spans.back().name != rows[i].entry) {
      spans.push_back({rows[i].entry, i, i});
    }
    spans.back().end = i + 1;
  }
  return spans;
}

std::string Signature(const std::vector<OpRow>& rows, const EntrySpan& s) {
  std::string sig = FuzzyName(s.name);
  for (size_t i = s.begin; i < s.end; ++i) {
    sig += '|';
    sig += RowStateName(rows[i].state);
    sig += rows[i].shape;
  }
  return sig;
}

// A row's name after its entry's ("…forward" + ".input.0"); the whole name
// when it does not start with the entry's (a tensor file's data name).
std::string Suffix(const std::string& row, const std::string& entry) {
  return row.compare(0, entry.size(), entry) == 0 ? row.substr(entry.size())
                                                  : row;
}

// Pairs the rows of two matched entries by their suffix after the entry name.
void MatchEntryRows(const std::vector<OpRow>& t, const EntrySpan& ts,
                    const std::vector<OpRow>& b, const EntrySpan& bs,
                    std::vector<int>* match) {
  std::unordered_map<std::string, size_t> by_suffix;
  for (size_t j = bs.begin; j < bs.end; ++j)
    by_suffix.emplace(Suffix(b[j].name, bs.name), j);
  for (size_t i = ts.begin; i < ts.end; ++i) {
    auto it = by_suffix.find(Suffix(t[i].name, ts.name));
    if (it != by_suffix.end() &&
        DTypesComparable(t[i].dtype, b[it->second].dtype)) {
      (*match)[i] = static_cast<int>(it->second);
    }
  }
}

}  // namespace

bool AlignSequences(const std::vector<std::string>& a,
                    const std::vector<std::string>& b, int max_edits,
                    std::vector<std::pair<size_t, size_t>>* pairs) {
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
  const long off = max_edits + 1;
  std::vector<long> v(2 * static_cast<size_t>(off) + 1, 0);
  std::vector<std::vector<long>> trace;  // v after each d, for k in [-d, d]
  long found = -1;
  for (long d = 0; d <= max_edits && found < 0; ++d) {
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
                   ? v[off + k + 1]
                   : v[off + k - 1] + 1;
      long y = x - k;
      while (x < n && y < m && a[x] == b[y]) ++x, ++y;
      v[off + k] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
  }
  if (found < 0) return false;
  std::vector<std::pair<size_t, size_t>> rev;
  long x = n, y = m;
  auto snake_back = [&](long to_x) {
    while (x > to_x)
      rev.emplace_back(static_cast<size_t>(--x), static_cast<size_t>(--y));
  };
  for (long d = found; d >= 1; --d) {
    const std::vector<long>& pv = trace[static_cast<size_t>(d - 1)];
    auto at = [&](long kk) { return pv[static_cast<size_t>(kk + d - 1)]; };
    long k = x - y;
    bool down = k == -d || (k != d && at(k - 1) < at(k + 1));
    long pk = down ? k + 1 : k - 1;
    long px = at(pk);
    snake_back(down ? px : px + 1);  // the diagonal after this edit
    x = px;
    y = px - pk;
  }
  snake_back(0);
  pairs->assign(rev.rbegin(), rev.rend());
  return true;
}

std::optional<std::vector<int>> AlignRows(const std::vector<OpRow>& target,
                                          const std::vector<OpRow>& baseline,
                                          int rank, int step,
                                          std::vector<AlignmentGap>* gaps) {
  std::vector<EntrySpan> ts = Spans(target), bs = Spans(baseline);
  std::vector<std::string> ta, ba;
  for (const auto& s : ts) ta.push_back(Signature(target, s));
  for (const auto& s : bs) ba.push_back(Signature(baseline, s));
  std::vector<std::pair<size_t, size_t>> pairs;
  if (!AlignSequences(ta, ba, kMaxAlignEdits, &pairs)) return std::nullopt;
  std::vector<int> match(target.size(), -1);
  std::vector<bool> t_used(ts.size()), b_used(bs.size());
  for (auto [i, j] : pairs) {
    t_used[i] = b_used[j] = true;
    MatchEntryRows(target, ts[i], baseline, bs[j], &match);
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!t_used[i]) gaps->push_back({ts[i].name, true, rank, i, step, i});
  }
  size_t next_pair = 0;  // the first pair after baseline entry j
  for (size_t j = 0; j < bs.size(); ++j) {
    while (next_pair < pairs.size() && pairs[next_pair].second <= j)
      ++next_pair;
    size_t before =
        next_pair < pairs.size() ? pairs[next_pair].first : ts.size();
    if (!b_used[j]) gaps->push_back({bs[j].name, false, rank, j, step, before});
  }
  return match;
}

}  // namespace lockstep
