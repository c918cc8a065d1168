#include "lockstep/format/module_parents.h"

#include "lockstep/format/dump_reader.h"

namespace lockstep {
namespace {

constexpr std::string_view kMicroStepKey = "megatron_micro_step_number";

// The parent a construct.json value names; false when it names none that
// can be used (and `*why` says what it is).
bool ParentOf(const PyValue& v, std::string* parent, std::string* why) {
  switch (v.kind()) {
    case PyValue::Kind::kNone:
      parent->clear();
      return true;
    case PyValue::Kind::kStr:
      *parent = v.as_str();
      return true;
    case PyValue::Kind::kList:
      if (!v.items().empty() && (v.items()[0].kind() == PyValue::Kind::kStr ||
                                 v.items()[0].is_none())) {
        *parent = v.items()[0].as_str();
        return true;
      }
      *why = "a list that does not start with a parent name";
      return false;
    default:
      *why = PyKindName(v);
      return false;
  }
}

}  // namespace

ModuleParents ModuleParentsFrom(const ConstructMap& map,
                                const std::string& path) {
  ModuleParents out;
  out.parent.reserve(map.size());
  for (const auto& [name, value] : map) {
    if (name == kMicroStepKey) continue;
    std::string parent, why;
    if (!ParentOf(value, &parent, &why)) {
      out.problems.push_back(path + ": entry '" + name + "': parent is " + why +
                             ", expected a str, null or [parent, " +
                             "micro_step]");
      continue;
    }
    if (ModuleOfEntry(name)) out.modules.push_back(name);
    out.parent.emplace(name, std::move(parent));
  }
  return out;
}

StatusOr<ModuleParents> ReadModuleParents(const std::string& path) {
  LOCKSTEP_ASSIGN_OR_RETURN(ConstructMap map, ReadConstructJson(path));
  return ModuleParentsFrom(map, path);
}

std::optional<ModuleName> ModuleOfEntry(std::string_view entry) {
  size_t start;
  if (entry.starts_with("Module.")) {
    start = 7;
  } else if (entry.starts_with("Cell.")) {
    start = 5;
  } else {
    return std::nullopt;
  }
  size_t end = std::string_view::npos;
  for (std::string_view kind :
       {".forward.", ".backward.", ".parameters_grad"}) {
    size_t at = entry.rfind(kind);
    if (at != std::string_view::npos && at > start &&
        (end == std::string_view::npos || at > end))
      end = at;
  }
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view head = entry.substr(start, end - start);  // path.Class
  size_t dot = head.rfind('.');
  ModuleName m;
  m.cls =
      std::string(dot == std::string_view::npos ? head : head.substr(dot + 1));
  m.path =
      std::string(dot == std::string_view::npos ? head : head.substr(0, dot));
  if (m.cls.empty() || m.path.empty()) return std::nullopt;
  return m;
}

}  // namespace lockstep
