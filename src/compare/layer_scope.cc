// The scope path of each dump.json entry for `-lm`: msprobe's
// DumpDataItem.set (data_scope_parser.py) and backward_pass
// (postprocess_pass.py); renumbering is in layer_renumber.cc, stacks in
// layer_stack.cc.
#include "layer_scope.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockstep/compare/op_rows.h"
#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/json_reader.h"

namespace lockstep::layer_detail {
namespace {

using Sv = std::string_view;

constexpr Sv kParamsGrad = "parameters_grad";

std::string JoinParts(const std::vector<Sv>& parts, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out += '.';
    out += parts[i];
  }
  return out;
}

// parts[:-k] joined, as Python slices (empty when there are fewer).
std::string JoinAllBut(const std::vector<Sv>& parts, size_t k) {
  return JoinParts(parts, 0, parts.size() > k ? parts.size() - k : 0);
}

bool AllDigits(Sv s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Python's bool(value).
bool Truthy(const PyValue& v) {
  switch (v.kind()) {
    case PyValue::Kind::kNone:
      return false;
    case PyValue::Kind::kBool:
      return v.as_bool();
    case PyValue::Kind::kInt:
    case PyValue::Kind::kFloat:
      return !v.as_str().empty() || v.as_double() != 0;
    case PyValue::Kind::kStr:
      return !v.as_str().empty();
    case PyValue::Kind::kList:
      return !v.items().empty();
    case PyValue::Kind::kDict:
      return !v.fields().empty();
  }
  return false;
}

// A dump.json's entries in order, each with its rows' names.
struct Entries {
  DumpFile file;  // top-level fields only
  std::vector<std::pair<std::string, std::vector<std::string>>> entries;
};

void AddEntry(const DumpEntry& e, size_t index, Entries* out) {
  std::vector<OpRow> rows;
  FlattenEntry(e, index, &rows);
  std::vector<std::string> names;
  names.reserve(rows.size());
  for (OpRow& r : rows) names.push_back(std::move(r.name));
  out->entries.emplace_back(e.name, std::move(names));
}

StatusOr<Entries> ReadEntries(const std::string& path) {
  Entries out;
  StatusOr<DumpFile> file =
      ReadDumpJsonStreaming(path, [&out](DumpEntry e, size_t index) {
        AddEntry(e, index, &out);
        return Status::Ok();
      });
  if (!file.ok() && file.status().code() == StatusCode::kNotSupported) {
    // A repeated entry name: Python's first position and last value.
    out.entries.clear();
    file = ReadDumpJson(path);
    if (file.ok()) {
      for (size_t i = 0; i < file->entries.size(); ++i)
        AddEntry(file->entries[i], i, &out);
      file->entries.clear();
    }
  }
  if (!file.ok()) return file.status();
  out.file = std::move(*file);
  return out;
}

// A line holds "type": "<prefix>... (msprobe's "type":\s*"<prefix>).
bool HasTypePrefix(Sv line, Sv prefix) {
  for (size_t at = line.find("\"type\":"); at != Sv::npos;
       at = line.find("\"type\":", at + 1)) {
    size_t i = at + 7;
    while (i < line.size() &&
           (line[i] == ' ' || (line[i] >= '\t' && line[i] <= '\r')))
      ++i;
    if (line.substr(i).starts_with("\"" + std::string(prefix))) return true;
  }
  return false;
}

// msprobe's detect_framework_by_dump_json: the "framework" field, else the
// first line naming a MindSpore or torch type. True for MindSpore.
StatusOr<bool> IsMindSpore(const DumpFile& dump) {
  if (dump.framework_given && dump.framework == "mindspore") return true;
  if (dump.framework_given && dump.framework == "pytorch") return false;
  LOCKSTEP_ASSIGN_OR_RETURN(std::string text, ReadFileToString(dump.path));
  Sv rest = text;
  while (!rest.empty()) {
    size_t nl = rest.find_first_of("\r\n");
    Sv line = rest.substr(0, nl);
    if (HasTypePrefix(line, "mindspore")) return true;
    if (HasTypePrefix(line, "torch")) return false;
    rest = nl == Sv::npos ? Sv() : rest.substr(nl + 1);
  }
  return Status::Corruption(
      dump.path,
      "neither a MindSpore nor a PyTorch dump: no \"framework\" field and no "
      "tensor of a mindspore or torch type. Note: -lm needs to know; add "
      "\"framework\": \"mindspore\" (or \"pytorch\") at the top");
}

// A side's stack.json and construct.json, parsed, with an index by entry.
struct Structure {
  std::string stack_path, construct_path;
  PyValue stack, construct;
  std::unordered_map<Sv, const PyValue*> stack_of, parent_of;
};

// Parses a JSON file as Python's json.load; `*index` gets its members when
// it is a dict. Returns false (no error) when it is falsy, as msprobe skips.
StatusOr<bool> LoadIndexed(const std::string& path, PyValue* value,
                           std::unordered_map<Sv, const PyValue*>* index) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  LOCKSTEP_ASSIGN_OR_RETURN(*value, ParsePyJson(text, path));
  if (!Truthy(*value)) return false;
  if (value->kind() != PyValue::Kind::kDict)
    return Status::Corruption(path, "the top level is " + PyKindName(*value) +
                                        ", expected a JSON object");
  for (const auto& [k, v] : value->fields()) (*index)[k] = &v;
  return true;
}

// msprobe's load_construct_json: with a "megatron_micro_step_number" key,
// a list value is [parent, micro_step] and stands for its parent.
// The key itself is no entry: it leaves the index.
Status TakeMegatronParents(Structure* s) {
  if (s->parent_of.erase("megatron_micro_step_number") == 0)
    return Status::Ok();
  for (auto& [name, v] : s->parent_of) {
    if (v->kind() != PyValue::Kind::kList) continue;
    if (v->items().size() != 2) {
      return Status::Corruption(s->construct_path,
                                "entry '" + Abbreviate(name) +
                                    "': expected [parent, micro_step], got a "
                                    "list of " +
                                    std::to_string(v->items().size()));
    }
    v = &v->items()[0];
  }
  return Status::Ok();
}

// Reads both files; *present false when the side has no structure.
Status ReadStructure(const LayerSide& side, Structure* s, bool* present) {
  s->stack_path = side.stack_json;
  s->construct_path = side.construct_json;
  bool stack = PathExists(side.stack_json);
  bool construct = PathExists(side.construct_json);
  *present = stack && construct;
  if (stack != construct) {
    const std::string& missing = stack ? side.construct_json : side.stack_json;
    return Status::NotFound(
        missing, "not found, but " +
                     (stack ? side.stack_json : side.construct_json) +
                     " is. Note: -lm reads both stack.json and construct.json "
                     "(or, with neither, compares without a layer mapping)");
  }
  if (!*present) return Status::Ok();
  LOCKSTEP_ASSIGN_OR_RETURN(
      bool st, LoadIndexed(s->stack_path, &s->stack, &s->stack_of));
  LOCKSTEP_ASSIGN_OR_RETURN(
      bool co, LoadIndexed(s->construct_path, &s->construct, &s->parent_of));
  if (!st || !co) {
    *present = false;
    return Status::Ok();
  }
  LOCKSTEP_RETURN_IF_ERROR(TakeMegatronParents(s));
  *present = !s->parent_of.empty();  // not just the Megatron key
  return Status::Ok();
}

// The entry's construct.json parent ("" for none). A parent Python finds
// true and that is not a string fails msprobe (its .split); so it does here.
StatusOr<Sv> ParentOf(const Structure& s, const std::string& name) {
  auto it = s.parent_of.find(name);
  if (it == s.parent_of.end() || !Truthy(*it->second)) return Sv();
  if (it->second->kind() == PyValue::Kind::kStr)
    return Sv(it->second->as_str());
  return Status::Corruption(s.construct_path,
                            "entry '" + Abbreviate(name) + "': the parent is " +
                                PyKindName(*it->second) +
                                ", expected a string or null");
}

// What an entry's name says (msprobe's DumpDataItem.set_name): its kind
// (the first part, or parameters_grad), its type, its own name in its
// parent's scope, and its direction.
struct NameParts {
  std::string api_type, type_name, api_name, state;
};

StatusOr<NameParts> ParseName(const std::string& name, const Sv dump_path) {
  std::vector<Sv> p = SplitDots(name);
  const size_t n = p.size();
  if (n < 4) {
    return Status::Corruption(
        dump_path, "entry '" + Abbreviate(name) +
                       "': fewer than 4 dot-separated parts, which -lm needs "
                       "(as in Functional.linear.0.forward)");
  }
  if (p[n - 1] == kParamsGrad)  // the old Cls.parameters_grad
    return NameParts{std::string(kParamsGrad), std::string(p[n - 2]),
                     std::string(p[n - 3]), std::string(kParamsGrad)};
  if (p[n - 2] == kParamsGrad && AllDigits(p[n - 1]))  // Cls.parameters_grad.0
    return NameParts{std::string(kParamsGrad), std::string(p[n - 3]),
                     std::string(p[n - 4]), std::string(kParamsGrad)};
  NameParts out{std::string(p[0]), std::string(p[n - 3]), "", ""};
  bool cell = p[0] == "Cell" || p[0] == "Module";  // Cell.a.Cls.forward.0
  out.api_name = cell ? p[n - 4] : p[n - 3];
  out.state = cell ? p[n - 2] : p[n - 1];
  return out;
}

// The scope of the cell that holds the entry (DumpDataItem.set_layer_scope).
StatusOr<std::string> LayerScope(const std::string& name, const NameParts& np,
                                 Sv parent, const Structure& s) {
  std::vector<Sv> q = SplitDots(parent);
  if (!parent.empty() && parent.find('.') != Sv::npos && q.size() < 4) {
    return Status::Corruption(s.construct_path,
                              "entry '" + Abbreviate(name) + "': parent '" +
                                  Abbreviate(parent) +
                                  "' has fewer than 4 dot-separated parts");
  }
  if (np.api_type == "Cell" || np.api_type == "Module")
    return JoinAllBut(SplitDots(name), 4);
  if (np.api_type == kParamsGrad) return JoinAllBut(SplitDots(name), 3);
  if (!parent.empty()) return JoinAllBut(q, 3);
  return std::string("TopLayer");
}

// The framework function in the scope of an API's entry: "" for cells,
// for Primitive and Jit entries, and where the stack is empty or absent.
StatusOr<std::string> StackScope(const std::string& name, const NameParts& np,
                                 bool mindspore, const Structure& s) {
  if (np.api_type == "Cell" || np.api_type == "Module" ||
      np.api_type == "Primitive" || np.api_type == "Jit")
    return std::string();
  auto it = s.stack_of.find(name);
  if (it == s.stack_of.end() || !Truthy(*it->second)) return std::string();
  return FrameworkFunction(*it->second, mindspore,
                           s.stack_path + ": entry '" + Abbreviate(name) + "'");
}

StatusOr<LayerItem> MakeItem(const std::string& name, const std::string& dump,
                             bool mindspore, const Structure& s) {
  LOCKSTEP_ASSIGN_OR_RETURN(NameParts np, ParseName(name, dump));
  LOCKSTEP_ASSIGN_OR_RETURN(Sv parent, ParentOf(s, name));
  LOCKSTEP_ASSIGN_OR_RETURN(std::string scope, LayerScope(name, np, parent, s));
  LOCKSTEP_ASSIGN_OR_RETURN(std::string frame,
                            StackScope(name, np, mindspore, s));
  LayerItem item;
  item.name = name;
  item.type_name = std::move(np.type_name);
  item.state = std::move(np.state);
  item.full_scope = std::move(scope);
  if (!frame.empty()) item.full_scope += "." + frame;
  item.full_scope += "." + np.api_name;
  return item;
}

// Python's s.replace("backward", "forward").
std::string BackwardToForward(Sv s) {
  std::string out;
  for (size_t at = 0;;) {
    size_t hit = s.find("backward", at);
    out += s.substr(at, hit - at);
    if (hit == Sv::npos) return out;
    out += "forward";
    at = hit + 8;
  }
}

// msprobe's backward_pass: a backward entry (backward among its last two
// parts) takes the scope of its forward entry, if dumped.
void InheritForwardScopes(std::vector<LayerItem>* items) {
  std::unordered_map<Sv, size_t> index;
  for (size_t i = 0; i < items->size(); ++i) index[(*items)[i].name] = i;
  for (LayerItem& item : *items) {
    std::vector<Sv> p = SplitDots(item.name);
    size_t n = p.size();  // >= 4
    if (p[n - 2] != "backward" && p[n - 1] != "backward") continue;
    std::string forward = JoinParts(p, 0, n - 2) + "." +
                          BackwardToForward(p[n - 2]) + "." +
                          BackwardToForward(p[n - 1]);
    auto it = index.find(forward);
    if (it != index.end()) item.full_scope = (*items)[it->second].full_scope;
  }
}

}  // namespace

std::vector<Sv> SplitDots(Sv s) {
  std::vector<Sv> parts;
  for (size_t at = 0;;) {
    size_t dot = s.find('.', at);
    parts.push_back(s.substr(at, dot - at));
    if (dot == Sv::npos) return parts;
    at = dot + 1;
  }
}

StatusOr<std::vector<LayerItem>> ReadLayerItems(const LayerSide& side) {
  LOCKSTEP_ASSIGN_OR_RETURN(Entries dump, ReadEntries(side.dump_json));
  LOCKSTEP_ASSIGN_OR_RETURN(bool mindspore, IsMindSpore(dump.file));
  Structure s;
  bool present = false;
  LOCKSTEP_RETURN_IF_ERROR(ReadStructure(side, &s, &present));
  std::vector<LayerItem> items;
  if (!present) return items;
  items.reserve(dump.entries.size());
  for (auto& [name, rows] : dump.entries) {
    LOCKSTEP_ASSIGN_OR_RETURN(LayerItem item,
                              MakeItem(name, side.dump_json, mindspore, s));
    item.rows = std::move(rows);
    items.push_back(std::move(item));
  }
  InheritForwardScopes(&items);
  RenumberParallelLayers(&items);
  return items;
}

}  // namespace lockstep::layer_detail
