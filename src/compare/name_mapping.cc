#include "lockstep/compare/name_mapping.h"

#include <string_view>
#include <unordered_map>

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

}  // namespace

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
