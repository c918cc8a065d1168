#include "lockstep/compare/env_diff.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_map>
#include <utility>

namespace lockstep {
namespace {

struct Rule {
  std::string_view section;
  std::string_view name;  // "" matches every name of the section
  EnvImpact impact;
  int order;  // rank within one impact: lower first
};

// The ranking table of env_diff.h; the first matching rule wins.
constexpr Rule kRules[] = {
    {"seed", "", EnvImpact::kLikely, 10},
    {"determinism", "", EnvImpact::kLikely, 20},
    {"precision", "", EnvImpact::kLikely, 30},
    {"run", "", EnvImpact::kLikely, 35},
    {"env", "CUBLAS_WORKSPACE_CONFIG", EnvImpact::kLikely, 40},
    {"env", "NVIDIA_TF32_OVERRIDE", EnvImpact::kLikely, 40},
    {"env", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", EnvImpact::kLikely, 40},
    {"env", "HCCL_DETERMINISTIC", EnvImpact::kLikely, 40},
    {"env", "INF_NAN_MODE_ENABLE", EnvImpact::kLikely, 40},
    {"env", "MKL_CBWR", EnvImpact::kLikely, 40},
    {"env", "ATEN_CPU_CAPABILITY", EnvImpact::kLikely, 40},
    {"libtorch", "version", EnvImpact::kPossible, 50},
    {"libtorch", "", EnvImpact::kPossible, 51},
    {"device", "", EnvImpact::kPossible, 55},
    {"blas", "", EnvImpact::kPossible, 60},
    {"cpu", "aten_capability", EnvImpact::kPossible, 65},
    {"threads", "", EnvImpact::kPossible, 70},
    {"env", "", EnvImpact::kPossible, 75},
    {"cpu", "", EnvImpact::kUnlikely, 80},
    {"compiler", "", EnvImpact::kUnlikely, 85},
    {"os", "", EnvImpact::kUnlikely, 90},
    {"host", "", EnvImpact::kNone, 100},
};
constexpr int kUnknownOrder = 95;  // sections the table does not name
constexpr size_t kShownChars = 100;

std::pair<EnvImpact, int> Rank(std::string_view section,
                               std::string_view name) {
  for (const Rule& r : kRules) {
    if (r.section == section && (r.name.empty() || r.name == name)) {
      return {r.impact, r.order};
    }
  }
  return {EnvImpact::kPossible, kUnknownOrder};
}

std::string Shorten(std::string_view s) {
  if (s.size() <= kShownChars) return std::string(s);
  return std::string(s.substr(0, kShownChars)) + "...";
}

std::vector<std::string_view> Split(std::string_view s, std::string_view seps) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find_first_of(seps, i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// Where two multi-line values first differ: "line 7: 'x' vs 'y'".
std::string FirstLineDifference(std::string_view a, std::string_view b) {
  size_t line = 1, i = 0, j = 0;
  while (true) {
    size_t ea = std::min(a.find('\n', i), a.size());
    size_t eb = std::min(b.find('\n', j), b.size());
    std::string_view la = i <= a.size() ? a.substr(i, ea - i) : "";
    std::string_view lb = j <= b.size() ? b.substr(j, eb - j) : "";
    if (la != lb || i > a.size() || j > b.size()) {
      return "line " + std::to_string(line) + ": '" + Shorten(la) + "' vs '" +
             Shorten(lb) + "'";
    }
    ++line;
    i = ea + 1;
    j = eb + 1;
  }
}

// For long one-line lists (CPU flags): the items only one side has.
std::string ItemDifference(std::string_view a, std::string_view b) {
  auto sa = Split(a, " ,\t"), sb = Split(b, " ,\t");
  std::set<std::string_view> ta(sa.begin(), sa.end()), tb(sb.begin(), sb.end());
  std::string only_a, only_b;
  auto add = [](std::string_view t, std::string* list) {
    if (!list->empty()) *list += ' ';
    *list += t;
  };
  for (auto t : ta) {
    if (!tb.count(t)) add(t, &only_a);
  }
  for (auto t : tb) {
    if (!ta.count(t)) add(t, &only_b);
  }
  if (only_a.empty() && only_b.empty()) return "same items, different order";
  return "only in a: " + (only_a.empty() ? "-" : Shorten(only_a)) +
         "; only in b: " + (only_b.empty() ? "-" : Shorten(only_b));
}

std::string Detail(std::string_view a, std::string_view b) {
  if (a.find('\n') != std::string_view::npos ||
      b.find('\n') != std::string_view::npos) {
    return FirstLineDifference(a, b);
  }
  if (a.size() > kShownChars || b.size() > kShownChars) {
    return ItemDifference(a, b);
  }
  return "";
}

std::string Show(const EnvField* f) {
  if (f == nullptr) return "(absent)";
  return f->value ? *f->value : "(unset)";
}

bool SameValue(const EnvField* a, const EnvField* b) {
  bool a_set = a != nullptr && a->value, b_set = b != nullptr && b->value;
  return a_set == b_set && (!a_set || *a->value == *b->value);
}

std::string Hex8(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return s + "]";
}

// What differs between two checksums of the same position.
std::string ChecksumMismatch(const EnvChecksum& a, const EnvChecksum& b) {
  if (a.name != b.name) return "name '" + a.name + "' vs '" + b.name + "'";
  if (a.dtype != b.dtype) return "dtype " + a.dtype + " vs " + b.dtype;
  if (a.shape != b.shape) {
    return "shape " + ShapeText(a.shape) + " vs " + ShapeText(b.shape);
  }
  if (a.crc32c != b.crc32c) {
    return "crc32c " + Hex8(a.crc32c) + " vs " + Hex8(b.crc32c);
  }
  return "";
}

void DiffChecksums(const std::string& key, const std::vector<EnvChecksum>& a,
                   const std::vector<EnvChecksum>& b,
                   std::vector<EnvDifference>* out) {
  if (a.empty() && b.empty()) return;
  auto count = [](const std::vector<EnvChecksum>& v) {
    return v.empty() ? std::string("(not recorded)")
                     : std::to_string(v.size()) + " tensors";
  };
  EnvDifference d{key, EnvImpact::kCertain, count(a), count(b), ""};
  if (a.empty() || b.empty()) {
    d.impact = EnvImpact::kNone;
    out->push_back(std::move(d));
    return;
  }
  size_t n = std::min(a.size(), b.size()), bad = 0, first = n;
  for (size_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;
    ++bad;
    if (first == n) first = i;
  }
  if (bad == 0 && a.size() == b.size()) return;
  if (first < n) {
    d.detail = std::to_string(bad) + " of " + std::to_string(n) +
               " differ, first #" + std::to_string(first) + " '" +
               a[first].name + "': " + ChecksumMismatch(a[first], b[first]);
  } else {
    d.detail = count(a) + " vs " + count(b) + "; the common " +
               std::to_string(n) + " are equal";
  }
  out->push_back(std::move(d));
}

int Order(const EnvDifference& d) {
  if (d.key == "parameters") return 0;
  if (d.key == "data") return 1;
  size_t dot = d.key.find('.');
  std::string_view k = d.key;
  return Rank(k.substr(0, dot), k.substr(dot + 1)).second;
}

// Each field's key -> the field (a hash index: fingerprints may hold tens of
// thousands of fields).
std::unordered_map<std::string, const EnvField*> IndexFields(
    const EnvFingerprint& fp) {
  std::unordered_map<std::string, const EnvField*> out;
  out.reserve(fp.fields.size());
  for (const EnvField& f : fp.fields) out[f.key()] = &f;
  return out;
}

}  // namespace

std::string_view EnvImpactName(EnvImpact impact) {
  switch (impact) {
    case EnvImpact::kNone:
      return "none";
    case EnvImpact::kUnlikely:
      return "unlikely";
    case EnvImpact::kPossible:
      return "possible";
    case EnvImpact::kLikely:
      return "likely";
    case EnvImpact::kCertain:
      return "certain";
  }
  return "?";
}

EnvImpact EnvFieldImpact(std::string_view section, std::string_view name) {
  return Rank(section, name).first;
}

size_t EnvDiff::relevant() const {
  return std::count_if(
      differences.begin(), differences.end(),
      [](const EnvDifference& d) { return d.impact != EnvImpact::kNone; });
}

EnvDiff DiffEnvFingerprints(const EnvFingerprint& a, const EnvFingerprint& b) {
  EnvDiff diff;
  DiffChecksums("parameters", a.parameters, b.parameters, &diff.differences);
  DiffChecksums("data", a.data, b.data, &diff.differences);
  auto ia = IndexFields(a), ib = IndexFields(b);
  auto at = [](const auto& index, const std::string& key) -> const EnvField* {
    auto it = index.find(key);
    return it == index.end() ? nullptr : it->second;
  };
  // Fields of `a` in order, then those only `b` has.
  auto visit = [&](const EnvField& f) {
    std::string key = f.key();
    const EnvField* fa = at(ia, key);
    const EnvField* fb = at(ib, key);
    if (SameValue(fa, fb)) return;
    EnvDifference d{key, EnvFieldImpact(f.section, f.name), Show(fa), Show(fb),
                    ""};
    d.detail = Detail(d.a, d.b);
    diff.differences.push_back(std::move(d));
  };
  for (const EnvField& f : a.fields) {
    if (at(ia, f.key()) == &f) visit(f);  // a repeated key counts once
  }
  for (const EnvField& f : b.fields) {
    if (at(ia, f.key()) == nullptr && at(ib, f.key()) == &f) visit(f);
  }
  std::stable_sort(diff.differences.begin(), diff.differences.end(),
                   [](const EnvDifference& x, const EnvDifference& y) {
                     if (x.impact != y.impact) return x.impact > y.impact;
                     return Order(x) < Order(y);
                   });
  return diff;
}

std::string DescribeEnvDifference(const EnvDifference& d) {
  std::string s(1, '[');
  s.append(EnvImpactName(d.impact)).append("] ").append(d.key).append(": ");
  if (!d.detail.empty()) return s.append(d.detail);
  return s.append(Shorten(d.a)).append(" vs ").append(Shorten(d.b));
}

}  // namespace lockstep
