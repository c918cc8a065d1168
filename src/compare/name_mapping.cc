#include "lockstep/compare/name_mapping.h"

#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace lockstep {
namespace {

// Python's s.replace(from, to): every occurrence, left to right.
std::string ReplaceAll(std::string s, std::string_view from,
                       std::string_view to) {
  if (from.empty()) return s;
  size_t at = 0;
  while ((at = s.find(from, at)) != std::string::npos) {
    s.replace(at, from.size(), to);
    at += to.size();
  }
  return s;
}

// Python's s.replace(from, to, 1).
std::string ReplaceFirst(std::string s, std::string_view from,
                         std::string_view to) {
  size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

const std::unordered_map<std::string_view, std::string_view>& MsToPtTable() {
  static const auto* table =
      new std::unordered_map<std::string_view, std::string_view>{
#include "ms_to_pt_api.inc"
      };
  return *table;
}

// Whether `name` holds ".forward." or ".backward." (msprobe's
// REGEX_FORWARD_BACKWARD).
bool HasCallDirection(std::string_view name) {
  return name.find(".forward.") != std::string_view::npos ||
         name.find(".backward.") != std::string_view::npos;
}

// The text before the first ".forward.", ".backward." or
// ".parameters_grad." (msprobe's re.split(...)[0]).
std::string_view BeforeDirection(std::string_view s) {
  size_t cut = std::string_view::npos;
  for (std::string_view w : {".forward.", ".backward.", ".parameters_grad."})
    cut = std::min(cut, s.find(w));
  return s.substr(0, cut);
}

bool HasSegment(std::string_view name, std::string_view segment) {
  size_t b = 0;
  for (;;) {
    size_t e = name.find('.', b);
    if (name.substr(b, e == std::string_view::npos ? e : e - b) == segment)
      return true;
    if (e == std::string_view::npos) return false;
    b = e + 1;
  }
}

// "Functional.add" of "Functional.add.0.forward.input.0" (the whole name
// when it has one dot or none).
std::string_view FirstTwoFields(std::string_view name) {
  size_t d1 = name.find('.');
  if (d1 == std::string_view::npos) return name;
  return name.substr(0, name.find('.', d1 + 1));
}

// The name a row of `e`'s API is matched with (msprobe's rule: the text
// after the entry and the row's marker is looked up in the MindSpore list;
// every ".input.<item>" is then replaced by the PyTorch item).
std::string UserMappedName(const ApiMappingEntry& e, const OpRow& r) {
  std::string name = ReplaceFirst(r.name, e.ms_api, e.pt_api);
  std::string entry = ReplaceFirst(r.entry, e.ms_api, e.pt_api);
  ApiMappingTerm term = ApiMappingTerm::kArgs;
  const char* marker = ".input.";
  switch (r.state) {
    case RowState::kOutput:
      term = ApiMappingTerm::kOutput, marker = ".output.";
      break;
    case RowState::kParameters:
      term = ApiMappingTerm::kParameters, marker = ".parameters.";
      break;
    case RowState::kParametersGrad:
      term = ApiMappingTerm::kParametersGrad, marker = ".parameters_grad.";
      break;
    default:
      break;
  }
  std::string prefix = entry + marker;
  std::string_view tail = name;
  if (tail.starts_with(prefix)) tail.remove_prefix(prefix.size());
  const auto& ms = e.ms[static_cast<int>(term)];
  const auto& pt = e.pt[static_cast<int>(term)];
  std::optional<std::string> out;
  for (size_t i = 0; i < ms.size() && i < pt.size(); ++i) {
    if (tail == ms[i])  // no break: a later equal item wins, as in msprobe
      out = ReplaceAll(name, marker + ms[i], marker + pt[i]);
  }
  return out ? *out : name + "abandoned";
}

}  // namespace

std::vector<ApiMappingEntry> UsableApiMappings(
    std::vector<ApiMappingEntry> entries, std::vector<std::string>* warnings) {
  static constexpr const char* kTerms[] = {"args", "output", "parameters",
                                           "parameters_grad"};
  std::vector<ApiMappingEntry> out;
  for (ApiMappingEntry& e : entries) {
    bool equal = true;
    for (int t = 0; t < kApiMappingTerms && equal; ++t) {
      if (e.ms[t].size() == e.pt[t].size()) continue;
      equal = false;
      warnings->push_back(
          "the API mapping entry at line " + std::to_string(e.line) + " (" +
          e.ms_api + "): ms_" + kTerms[t] + " has " +
          std::to_string(e.ms[t].size()) + " items and pt_" + kTerms[t] + " " +
          std::to_string(e.pt[t].size()) + ": skipped, as msprobe skips it");
    }
    if (equal) out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> UserApiMappedNames(
    const std::vector<ApiMappingEntry>& entries,
    const std::vector<OpRow>& target, const std::vector<OpRow>& baseline) {
  std::unordered_set<std::string_view> target_apis, baseline_apis;
  for (const OpRow& r : target) target_apis.insert(FirstTwoFields(r.name));
  for (const OpRow& r : baseline) baseline_apis.insert(FirstTwoFields(r.name));
  std::unordered_map<std::string_view, const ApiMappingEntry*> last;
  for (const ApiMappingEntry& e : entries) {
    if (target_apis.contains(e.ms_api) && baseline_apis.contains(e.pt_api))
      last[e.ms_api] = &e;
  }
  std::vector<std::string> out;
  out.reserve(target.size());
  for (const OpRow& r : target) {
    auto it = last.find(FirstTwoFields(r.name));
    out.push_back(it == last.end() ? MsApiMappedName(r.name)
                                   : UserMappedName(*it->second, r));
  }
  return out;
}

std::string MsApiMappedName(const std::string& name) {
  size_t d1 = name.find('.');
  if (d1 == std::string::npos) return name;  // msprobe: an error; no key
  size_t d2 = name.find('.', d1 + 1);
  std::string_view api = std::string_view(name).substr(
      0, d2 == std::string::npos ? name.size() : d2);
  std::string_view prefix = api.substr(0, d1);
  if (prefix == "Mint") return ReplaceAll(name, "Mint", "Torch");
  if (prefix == "MintFunctional")
    return ReplaceAll(name, "MintFunctional", "Functional");
  auto it = MsToPtTable().find(api);
  if (it == MsToPtTable().end()) return name;
  return ReplaceAll(name, std::string(api), it->second);
}

std::optional<std::string> CellMappedName(const std::string& name,
                                          const CellMapping& mapping) {
  if (name.empty()) return std::nullopt;
  if (!HasSegment(name, "parameters_grad") && !HasCallDirection(name))
    return std::nullopt;
  std::string out = ReplaceFirst(name, "Cell", "Module");
  if (mapping.empty()) return out;
  size_t dot = out.find('.');
  std::string_view after = dot == std::string::npos
                               ? std::string_view(out)
                               : std::string_view(out).substr(dot + 1);
  std::string cell(BeforeDirection(after));
  std::string mapped = cell;
  bool whole = false;
  for (const auto& [from, to] : mapping) {
    if (from == cell) {
      mapped = to;
      whole = true;
      break;
    }
  }
  if (!whole) {
    for (const auto& [from, to] : mapping) {
      if (mapped.find(from) != std::string::npos)
        mapped = ReplaceFirst(mapped, from, to);
    }
  }
  if (mapped != cell) out = ReplaceFirst(out, cell, mapped);
  return out;
}

}  // namespace lockstep
