#include "lockstep/compare/matching.h"

#include "lockstep/compare/fuzzy_match.h"

#include <cctype>
#include <deque>
#include <map>
#include <unordered_map>

namespace lockstep {
namespace {

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> parts;
  size_t b = 0;
  for (;;) {
    size_t e = s.find('.', b);
    parts.push_back(
        s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return parts;
    b = e + 1;
  }
}

std::string Join(const std::vector<std::string>& parts, size_t from,
                 size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) {
    if (i > from) out += '.';
    out += parts[i];
  }
  return out;
}

// For an entry "Prefix.api.N.backward" returns {"Prefix.api", N position};
// renumbering replaces N. Returns false for other entries.
bool SplitCallIndex(const std::string& entry, const char* kind,
                    std::string* api) {
  std::vector<std::string> p = Split(entry);
  if (p.size() < 3 || p.back() != kind || !AllDigits(p[p.size() - 2]))
    return false;
  *api = Join(p, 0, p.size() - 2);
  return true;
}

// entry -> renumbered entry, for the entries of one dump in order.
std::unordered_map<std::string, std::string> RenumberEntries(
    const std::vector<OpRow>& rows, const MatchOptions& options) {
  std::unordered_map<std::string, std::string> out;
  std::map<std::string, int> seen;
  const std::string* last = nullptr;
  for (const OpRow& r : rows) {
    if (last != nullptr && *last == r.entry) continue;
    last = &r.entry;
    if (out.count(r.entry)) continue;
    std::string api;
    if (SplitCallIndex(r.entry, "backward", &api)) {
      int n = seen[api + "#b"]++;
      out[r.entry] = api + "." + std::to_string(n) + ".backward";
    } else if (options.renumber_params_grad) {
      // "Module.x.Linear.parameters_grad.N" has its index last.
      std::vector<std::string> p = Split(r.entry);
      if (p.size() >= 2 && p[p.size() - 2] == "parameters_grad" &&
          AllDigits(p.back())) {
        std::string base = Join(p, 0, p.size() - 1);
        int n = seen[base + "#g"]++;
        out[r.entry] = base + "." + std::to_string(n);
      }
    }
  }
  return out;
}

bool IsFloatFamily(const std::string& d) {
  return d == "torch.float16" || d == "torch.float32" || d == "torch.bfloat16";
}
bool IsMsFloatFamily(const std::string& d) {
  return d == "Float16" || d == "Float32" || d == "BFloat16";
}

}  // namespace

bool DTypesComparable(const std::string& a, const std::string& b) {
  if (a == b) return true;
  return (IsFloatFamily(a) && IsFloatFamily(b)) ||
         (IsMsFloatFamily(a) && IsMsFloatFamily(b));
}

std::vector<std::string> CompareKeys(const std::vector<OpRow>& rows,
                                     const MatchOptions& options) {
  auto renamed = RenumberEntries(rows, options);
  std::vector<std::string> keys;
  keys.reserve(rows.size());
  for (const OpRow& r : rows) {
    auto it = renamed.find(r.entry);
    if (it == renamed.end() ||
        r.name.compare(0, r.entry.size(), r.entry) != 0) {
      keys.push_back(r.name);
    } else {
      keys.push_back(it->second + r.name.substr(r.entry.size()));
    }
  }
  return keys;
}

std::string FuzzyName(const std::string& row_name) {
  std::vector<std::string> p = Split(row_name);
  // API rows: Prefix.api.N.forward|backward.io...; modules keep their index
  // after forward/backward: Module.path.Class.forward.N.io...
  for (size_t i = 1; i + 1 < p.size(); ++i) {
    if ((p[i + 1] == "forward" || p[i + 1] == "backward") && AllDigits(p[i])) {
      p.erase(p.begin() + static_cast<long>(i));
      return Join(p, 0, p.size());
    }
  }
  return row_name;
}

std::vector<int> MatchRows(const std::vector<OpRow>& target,
                           const std::vector<OpRow>& baseline,
                           const MatchOptions& options) {
  if (options.fuzzy) return FuzzyMatchRows(target, baseline);
  std::vector<int> match(target.size(), -1);
  std::vector<std::string> tk = CompareKeys(target, options);
  std::vector<std::string> bk = CompareKeys(baseline, options);
  // Each key's k-th target occurrence pairs with its k-th baseline
  // occurrence (exact keys are unique, so this is a plain merge).
  std::unordered_map<std::string, std::deque<int>> by_key;
  for (size_t i = 0; i < baseline.size(); ++i)
    by_key[bk[i]].push_back(static_cast<int>(i));
  for (size_t i = 0; i < target.size(); ++i) {
    auto it = by_key.find(tk[i]);
    if (it == by_key.end() || it->second.empty()) continue;
    int j = it->second.front();
    it->second.pop_front();
    if (DTypesComparable(target[i].dtype,
                         baseline[static_cast<size_t>(j)].dtype))
      match[i] = j;
  }
  return match;
}

}  // namespace lockstep
