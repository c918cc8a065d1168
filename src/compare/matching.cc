#include "lockstep/compare/matching.h"

#include <cctype>
#include <deque>
#include <string_view>
#include <unordered_map>

#include "lockstep/compare/fuzzy_match.h"
#include "lockstep/compare/verdict.h"

namespace lockstep {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// The dot-separated segments of a name, as views into it.
std::vector<std::string_view> Segments(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t b = 0;
  for (;;) {
    size_t e = s.find('.', b);
    parts.push_back(s.substr(b, e == std::string_view::npos ? e : e - b));
    if (e == std::string_view::npos) return parts;
    b = e + 1;
  }
}

// The renumbered name of an entry ("Prefix.api.N.backward" with N its
// occurrence among the entry's API's backward calls; with
// renumber_params_grad, "X.parameters_grad.N" likewise), or false when the
// entry keeps its name. `seen` counts occurrences.
bool Renumber(std::string_view entry, const MatchOptions& options,
              std::unordered_map<std::string, int>* seen, std::string* out) {
  size_t d2 = entry.rfind('.');
  if (d2 == std::string_view::npos || d2 == 0) return false;
  size_t d1 = entry.rfind('.', d2 - 1);  // npos: two segments
  size_t from = d1 == std::string_view::npos ? 0 : d1 + 1;
  std::string_view second_last = entry.substr(from, d2 - from);
  std::string_view last = entry.substr(d2 + 1);
  if (d1 != std::string_view::npos && last == "backward" &&
      AllDigits(second_last)) {
    std::string api(entry.substr(0, d1));
    int n = (*seen)[api + "#b"]++;
    *out = api + "." + std::to_string(n) + ".backward";
    return true;
  }
  if (options.renumber_params_grad && second_last == "parameters_grad" &&
      AllDigits(last)) {
    std::string base(entry.substr(0, d2));
    int n = (*seen)[base + "#g"]++;
    *out = base + "." + std::to_string(n);
    return true;
  }
  return false;
}

// The key msprobe merges on for each row: a view of the row's name, or of
// its renumbered form kept in `store`.
std::vector<std::string_view> KeyViews(const std::vector<OpRow>& rows,
                                       const MatchOptions& options,
                                       std::deque<std::string>* store) {
  std::vector<std::string_view> keys(rows.size());
  std::unordered_map<std::string, int> seen;
  // Entries renamed so far: an entry met again (not next to its rows)
  // keeps its first number.
  std::unordered_map<std::string_view, std::string_view> renamed;
  std::string scratch;
  size_t i = 0;
  while (i < rows.size()) {
    const std::string& entry = rows[i].entry;
    size_t j = i + 1;
    while (j < rows.size() && rows[j].entry == entry) ++j;
    std::string_view to;
    if (auto it = renamed.find(entry); it != renamed.end()) {
      to = it->second;
    } else if (Renumber(entry, options, &seen, &scratch)) {
      to = store->emplace_back(std::move(scratch));
      renamed.emplace(entry, to);
    }
    for (size_t k = i; k < j; ++k) {
      const std::string& name = rows[k].name;
      if (to.empty() || name.compare(0, entry.size(), entry) != 0) {
        keys[k] = name;
      } else {
        keys[k] = store->emplace_back(
            std::string(to).append(name, entry.size(), std::string::npos));
      }
    }
    i = j;
  }
  return keys;
}

// msprobe 26's DTYPE_MATCH_GROUPS: float64 is in them (a reference run in
// double against one in float32 pairs).
bool IsFloatFamily(const std::string& d) {
  return d == "torch.float16" || d == "torch.float32" ||
         d == "torch.bfloat16" || d == "torch.float64";
}
bool IsMsFloatFamily(const std::string& d) {
  return d == "Float16" || d == "Float32" || d == "BFloat16" || d == "Float64";
}

// msprobe's cross_dtype_mapping, for a MindSpore dump ("Float32", "Int64")
// against a PyTorch one ("torch.float32"): the kind, "int", "float", "bool"
// or "complex", or "" for a name it does not map.
std::string_view CrossFrameworkKind(std::string_view d) {
  if (!d.starts_with("torch.") && (d.empty() || d[0] < 'A' || d[0] > 'Z'))
    return {};
  std::string n = NormalizedDtype(d);  // "torch.Int64", "Int64" -> "int64"
  static const auto* kinds =
      new std::unordered_map<std::string, std::string_view>{
          {"int8", "int"},          {"uint8", "int"},
          {"int16", "int"},         {"uint16", "int"},
          {"int32", "int"},         {"uint32", "int"},
          {"int64", "int"},         {"uint64", "int"},
          {"float16", "float"},     {"float32", "float"},
          {"float64", "float"},     {"bfloat16", "float"},
          {"bool", "bool"},         {"complex64", "complex"},
          {"complex128", "complex"}};
  auto it = kinds->find(n);
  return it == kinds->end() ? std::string_view() : it->second;
}

}  // namespace

bool DTypesComparable(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if ((IsFloatFamily(a) && IsFloatFamily(b)) ||
      (IsMsFloatFamily(a) && IsMsFloatFamily(b))) {
    return true;
  }
  // Across frameworks only (one name PyTorch's, the other MindSpore's).
  if (a.starts_with("torch.") == b.starts_with("torch.")) return false;
  std::string_view kind = CrossFrameworkKind(a);
  return !kind.empty() && kind == CrossFrameworkKind(b);
}

std::string FuzzyName(const std::string& row_name) {
  std::vector<std::string_view> p = Segments(row_name);
  // API rows: Prefix.api.N.forward|backward.io...; modules keep their index
  // after forward/backward: Module.path.Class.forward.N.io...
  for (size_t i = 1; i + 1 < p.size(); ++i) {
    if ((p[i + 1] == "forward" || p[i + 1] == "backward") && AllDigits(p[i])) {
      // Drop segment i and the dot before it.
      size_t at = static_cast<size_t>(p[i].data() - row_name.data());
      return row_name.substr(0, at - 1) + row_name.substr(at + p[i].size());
    }
  }
  return row_name;
}

std::vector<int> MatchRows(const std::vector<OpRow>& target,
                           const std::vector<OpRow>& baseline,
                           const MatchOptions& options) {
  if (options.fuzzy)
    return FuzzyMatchRows(target, baseline, options.fuzzy_rule);
  std::vector<int> match(target.size(), -1);
  const auto* mapping = options.data_mapping;
  if (mapping != nullptr && mapping->empty()) mapping = nullptr;
  // Two runs of one model usually dump the same rows in the same order:
  // then every key's k-th occurrence is at the same place on both sides
  // (keys are made from the entries and names alone), and the merge below
  // would pair each row with its twin. Said without hashing a key.
  bool twins = target.size() == baseline.size() && mapping == nullptr;
  for (size_t i = 0; twins && i < target.size(); ++i) {
    twins = target[i].name == baseline[i].name &&
            target[i].entry == baseline[i].entry;
  }
  if (twins) {
    for (size_t i = 0; i < target.size(); ++i) {
      if (DTypesComparable(target[i].dtype, baseline[i].dtype))
        match[i] = static_cast<int>(i);
    }
    return match;
  }
  std::deque<std::string> store;
  std::vector<std::string_view> tk = KeyViews(target, options, &store);
  std::vector<std::string_view> bk = KeyViews(baseline, options, &store);
  // Each key's k-th target occurrence pairs with its k-th baseline
  // occurrence (exact keys are unique, so this is a plain merge): `head`
  // holds each key's next unused baseline row, `next` the one after it.
  std::unordered_map<std::string_view, int> head;
  head.reserve(baseline.size());
  std::vector<int> next(baseline.size(), -1);
  for (size_t j = baseline.size(); j-- > 0;) {
    auto [it, inserted] = head.try_emplace(bk[j], static_cast<int>(j));
    if (!inserted) {
      next[j] = it->second;
      it->second = static_cast<int>(j);
    }
  }
  // Mapped rows take the baseline row their mapping names (its first
  // occurrence: `head` before any row is taken), which other target rows
  // may take too (msprobe merges on the key); the rest match below.
  std::vector<bool> mapped;
  if (mapping != nullptr) {
    mapped.assign(target.size(), false);
    for (size_t i = 0; i < target.size(); ++i) {
      auto it = mapping->find(target[i].name);
      if (it == mapping->end()) continue;
      mapped[i] = true;
      auto f = head.find(it->second);
      if (f != head.end()) match[i] = f->second;
    }
  }
  for (size_t i = 0; i < target.size(); ++i) {
    if (!mapped.empty() && mapped[i]) continue;
    auto it = head.find(tk[i]);
    if (it == head.end() || it->second < 0) continue;
    int j = it->second;
    it->second = next[static_cast<size_t>(j)];
    if (mapping != nullptr ||
        DTypesComparable(target[i].dtype,
                         baseline[static_cast<size_t>(j)].dtype))
      match[i] = j;
  }
  return match;
}

}  // namespace lockstep
