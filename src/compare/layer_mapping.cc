// msprobe's `-lm` (core/compare/layer_mapping/layer_mapping.py): the rule
// file, the scope trees, a target entry's path renamed and looked up in the
// baseline's tree, and entries to rows. Scopes come from layer_scope.cc.
#include "lockstep/compare/layer_mapping.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "layer_scope.h"
#include "lockstep/core/check.h"
#include "lockstep/core/file.h"
#include "lockstep/format/yaml_mapping.h"

namespace lockstep {
namespace {

using layer_detail::LayerItem;
using layer_detail::SplitDots;
using Sv = std::string_view;

Status RuleError(Sv subject, size_t line, const std::string& problem) {
  return Status::Corruption(subject,
                            "line " + std::to_string(line) + ": " + problem);
}

// A rule key or target must be a str to msprobe (it splits them).
Status CheckText(Sv subject, const YamlScalar& s, const char* what,
                 const std::string& type) {
  if (s.type == YamlType::kStr) return Status::Ok();
  return RuleError(subject, s.line,
                   std::string("the ") + what + " '" + Abbreviate(s.text) +
                       "' under '" + type + "' is " + YamlTypeName(s.type) +
                       " in YAML, not a string. Note: quote it ('" +
                       Abbreviate(s.text) + "'), or give it a value");
}

// The rules of one type, prepared (msprobe's preprocess_layer_mapping): by
// the first part of the key, the most levels first, then in file order.
StatusOr<std::map<std::string, std::vector<LayerRule>>> PrepareRules(
    Sv subject, const YamlSection& section) {
  const std::string& type = section.key.text;
  if (!section.is_mapping) {
    return RuleError(subject, section.key.line,
                     "'" + type + "' has no rules (" +
                         YamlTypeName(section.scalar.type) +
                         "). Note: write its rules below it, indented, one "
                         "`child: target` a line, or remove it");
  }
  std::map<std::string, std::vector<LayerRule>> out;
  for (const auto& [key, value] : section.entries) {
    LOCKSTEP_RETURN_IF_ERROR(CheckText(subject, key, "rule", type));
    LOCKSTEP_RETURN_IF_ERROR(CheckText(subject, value, "target", type));
    std::vector<Sv> parts = SplitDots(key.text);
    out[std::string(parts[0])].push_back(LayerRule{
        key.text, value.text.substr(0, value.text.find('(')), parts.size()});
  }
  for (auto& [first, rules] : out) {
    std::stable_sort(rules.begin(), rules.end(),
                     [](const LayerRule& a, const LayerRule& b) {
                       return a.levels > b.levels;
                     });
  }
  return out;
}

// One side's scope paths as a tree (msprobe's LayerTrie). The root is
// "TopLayer"; a node's type is the type of the last entry placed at it, or
// its own name when none is: a cell that is not dumped is known by its
// attribute name.
class ScopeTree {
 public:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  explicit ScopeTree(const std::vector<LayerItem>& items)
      : nodes_(1), ordinal_(items.size()) {
    nodes_[0].type = "TopLayer";
    for (size_t i = 0; i < items.size(); ++i) Insert(items[i], i);
  }

  // The child `name` of `node`, or kNone.
  size_t Child(size_t node, Sv name) const {
    auto it = nodes_[node].children.find(std::string(name));
    return it == nodes_[node].children.end() ? kNone : it->second;
  }
  const std::string& Type(size_t node) const { return nodes_[node].type; }
  // The item that is the `ordinal`-th of direction `state` at `node`, or
  // kNone.
  size_t ItemAt(size_t node, const std::string& state, size_t ordinal) const {
    auto it = nodes_[node].items.find(state);
    if (it == nodes_[node].items.end() || ordinal >= it->second.size())
      return kNone;
    return it->second[ordinal];
  }
  // Where item `i` is among its node's items of its direction.
  size_t Ordinal(size_t i) const { return ordinal_[i]; }

 private:
  struct Node {
    std::string type;
    std::unordered_map<std::string, size_t> children;
    std::unordered_map<std::string, std::vector<size_t>> items;  // by state
  };

  // Below the root along the scope's parts after the first.
  void Insert(const LayerItem& item, size_t i) {
    std::vector<Sv> parts = SplitDots(item.full_scope);
    size_t node = 0;
    for (size_t k = 1; k < parts.size(); ++k) {
      size_t next = Child(node, parts[k]);
      if (next == kNone) {
        next = nodes_.size();
        nodes_[node].children.emplace(std::string(parts[k]), next);
        nodes_.push_back(Node{std::string(parts[k]), {}, {}});
      }
      node = next;
    }
    std::vector<size_t>& here = nodes_[node].items[item.state];
    ordinal_[i] = here.size();
    here.push_back(i);
    nodes_[node].type = item.type_name;
  }

  std::vector<Node> nodes_;
  std::vector<size_t> ordinal_;
};

// parts[at, at + levels) joined equals `key`.
bool RuleMatches(const std::vector<Sv>& parts, size_t at,
                 const LayerRule& rule) {
  if (rule.levels > parts.size() - at) return false;
  std::string joined;
  for (size_t k = at; k < at + rule.levels; ++k) {
    if (k > at) joined += '.';
    joined += parts[k];
  }
  return joined == rule.key;
}

// The baseline path of target item `i` (msprobe's convert_scope): walking
// its path from the root, each next part (or several, by a rule of more
// levels) renamed by the first rule of the current node's type that
// matches, else kept.
std::string ConvertScope(const ScopeTree& tree, const LayerItem& item,
                         const LayerRules* rules) {
  std::vector<Sv> parts = SplitDots(item.full_scope);
  std::string out = "TopLayer";
  size_t node = 0;
  for (size_t i = 0; i + 1 < parts.size();) {
    const std::vector<LayerRule>* candidates =
        rules != nullptr ? rules->Find(tree.Type(node), parts[i + 1]) : nullptr;
    Sv target = parts[i + 1];
    size_t step = 1;
    for (size_t r = 0; candidates != nullptr && r < candidates->size(); ++r) {
      if (!RuleMatches(parts, i + 1, (*candidates)[r])) continue;
      target = (*candidates)[r].target;
      step = (*candidates)[r].levels;
      break;
    }
    out += ".";
    out += target;
    for (size_t k = 0; k < step; ++k) {
      node = tree.Child(node, parts[++i]);
      LOCKSTEP_CHECK(node != ScopeTree::kNone);  // the item's own path
    }
  }
  return out;
}

// The baseline item at `scope` (its parts after the first), or kNone.
size_t QueryScope(const ScopeTree& tree, const std::string& scope,
                  const std::string& state, size_t ordinal) {
  std::vector<Sv> parts = SplitDots(scope);
  size_t node = 0;
  for (size_t k = 1; k < parts.size() && node != ScopeTree::kNone; ++k)
    node = tree.Child(node, parts[k]);
  if (node == ScopeTree::kNone) return ScopeTree::kNone;
  return tree.ItemAt(node, state, ordinal);
}

// Both sides' items and, per target item, its baseline item or kNone.
struct EntryMatch {
  std::vector<LayerItem> target, baseline;
  std::vector<size_t> partner;
};

StatusOr<EntryMatch> MatchEntries(const LayerSide& target,
                                  const LayerSide& baseline,
                                  const LayerRules* rules) {
  EntryMatch m;
  LOCKSTEP_ASSIGN_OR_RETURN(m.target, layer_detail::ReadLayerItems(target));
  LOCKSTEP_ASSIGN_OR_RETURN(m.baseline, layer_detail::ReadLayerItems(baseline));
  ScopeTree target_tree(m.target), baseline_tree(m.baseline);
  m.partner.reserve(m.target.size());
  for (size_t i = 0; i < m.target.size(); ++i) {
    const LayerItem& item = m.target[i];
    m.partner.push_back(QueryScope(baseline_tree,
                                   ConvertScope(target_tree, item, rules),
                                   item.state, target_tree.Ordinal(i)));
  }
  return m;
}

// Appends each row of `t` with the row of `b` (nullptr: none) that has the
// same text after its entry's name; a row already in *out keeps its place.
void PairRowsBySuffix(const LayerItem& t, const LayerItem* b, LayerPairs* out,
                      std::unordered_map<std::string, size_t>* seen) {
  auto suffix = [](const LayerItem& e, const std::string& row) {
    return Sv(row).substr(std::min(e.name.size(), row.size()));
  };
  std::unordered_map<Sv, const std::string*> by_suffix;
  if (b != nullptr) {
    for (const std::string& row : b->rows) by_suffix[suffix(*b, row)] = &row;
  }
  for (const std::string& row : t.rows) {
    auto it = by_suffix.find(suffix(t, row));
    std::string partner = it == by_suffix.end() ? kLayerNoPartner : *it->second;
    auto [at, fresh] = seen->emplace(row, out->size());
    if (fresh) {
      out->emplace_back(row, std::move(partner));
    } else {
      (*out)[at->second].second = std::move(partner);
    }
  }
}

}  // namespace

const std::vector<LayerRule>* LayerRules::Find(Sv type, Sv child) const {
  auto t = rules.find(std::string(type));
  if (t == rules.end()) return nullptr;
  auto c = t->second.find(std::string(child));
  return c == t->second.end() ? nullptr : &c->second;
}

StatusOr<LayerRules> ParseLayerRules(Sv text, Sv subject) {
  LOCKSTEP_ASSIGN_OR_RETURN(YamlTwoLevel doc, ParseYamlTwoLevel(text, subject));
  if (doc.null_document) {
    return Status::Corruption(
        subject,
        "empty. Note: write `{}` for no rules, or leave -lm without "
        "a file");
  }
  // A "Cell" key (the root's legacy name) replaces any "TopLayer" one,
  // unless it is null (`Cell:` alone); then it is dropped (as msprobe).
  auto is = [](const YamlSection& s, Sv name) {
    return s.key.type == YamlType::kStr && s.key.text == name;
  };
  const YamlSection* cell = nullptr;
  for (const YamlSection& s : doc.sections) {
    if (is(s, "Cell")) cell = &s;
  }
  bool cell_replaces =
      cell != nullptr &&
      (cell->is_mapping || cell->scalar.type != YamlType::kNull);
  LayerRules out;
  for (const YamlSection& s : doc.sections) {
    if (is(s, "Cell") || (cell_replaces && is(s, "TopLayer"))) continue;
    LOCKSTEP_ASSIGN_OR_RETURN(auto rules, PrepareRules(subject, s));
    // A key YAML types as no string matches no type name in msprobe.
    if (s.key.type == YamlType::kStr) out.rules[s.key.text] = std::move(rules);
  }
  if (cell_replaces) {
    LOCKSTEP_ASSIGN_OR_RETURN(out.rules["TopLayer"],
                              PrepareRules(subject, *cell));
  }
  return out;
}

StatusOr<LayerRules> ReadLayerRules(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParseLayerRules(*text, path);
}

LayerSide LayerSideOf(const std::string& dump_json) {
  size_t slash = dump_json.rfind('/');
  std::string dir =
      slash == std::string::npos ? "" : dump_json.substr(0, slash + 1);
  return LayerSide{dump_json, dir + "stack.json", dir + "construct.json"};
}

StatusOr<LayerPairs> LayerEntryMapping(const LayerSide& target,
                                       const LayerSide& baseline,
                                       const LayerRules* rules) {
  LOCKSTEP_ASSIGN_OR_RETURN(EntryMatch m,
                            MatchEntries(target, baseline, rules));
  LayerPairs out;
  out.reserve(m.target.size());
  for (size_t i = 0; i < m.target.size(); ++i) {
    size_t b = m.partner[i];
    out.emplace_back(m.target[i].name, b == ScopeTree::kNone
                                           ? std::string(kLayerNoPartner)
                                           : m.baseline[b].name);
  }
  return out;
}

StatusOr<LayerPairs> LayerDataMapping(const LayerSide& target,
                                      const LayerSide& baseline,
                                      const LayerRules* rules) {
  LOCKSTEP_ASSIGN_OR_RETURN(EntryMatch m,
                            MatchEntries(target, baseline, rules));
  LayerPairs out;
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < m.target.size(); ++i) {
    size_t b = m.partner[i];
    PairRowsBySuffix(m.target[i],
                     b == ScopeTree::kNone ? nullptr : &m.baseline[b], &out,
                     &seen);
  }
  return out;
}

}  // namespace lockstep
