// ParseApiMappingFile: the block-style YAML subset of msprobe's custom API
// mapping files (see the header), read line by line.
#include "lockstep/format/api_mapping_file.h"

#include <optional>
#include <set>

#include "lockstep/core/file.h"
#include "yaml_scalar.h"

namespace lockstep {
namespace {

using Entries = std::vector<ApiMappingEntry>;

constexpr char kForm[] =
    " (an API mapping file is a YAML list of entries: `- ms_api: ...`, "
    "`pt_api: ...`, then lists such as `ms_args: [0, 1]`)";

using yaml_detail::YamlRestIsEmpty;
using yaml_detail::YamlTrim;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// A list key's term and side, or nullopt for ms_api/pt_api or unknown keys.
struct ListKey {
  ApiMappingTerm term;
  bool ms;
};
std::optional<ListKey> ListKeyOf(std::string_view key) {
  bool ms = key.starts_with("ms_");
  if (!ms && !key.starts_with("pt_")) return std::nullopt;
  std::string_view rest = key.substr(3);
  if (rest == "args") return ListKey{ApiMappingTerm::kArgs, ms};
  if (rest == "output" || rest == "outputs")
    return ListKey{ApiMappingTerm::kOutput, ms};
  if (rest == "parameters") return ListKey{ApiMappingTerm::kParameters, ms};
  if (rest == "parameters_grad")
    return ListKey{ApiMappingTerm::kParametersGrad, ms};
  return std::nullopt;
}

// Reads a scalar at the start of *s: 'quoted' ('' inside), "quoted" (\\,
// \", \n, \t), or plain up to one of `stops` or a " #" comment. Advances
// *s past it; false with *why on a malformed one.
bool Scalar(std::string_view* s, std::string_view stops, std::string* out,
            std::string* why) {
  *s = YamlTrim(*s);
  out->clear();
  if (s->empty()) return *why = "a value is missing", false;
  char q = s->front();
  if (q == '\'' || q == '"') {
    for (size_t i = 1; i < s->size(); ++i) {
      char c = (*s)[i];
      if (c == q && q == '\'' && i + 1 < s->size() && (*s)[i + 1] == q) {
        out->push_back(q);  // '' inside '...'
        ++i;
      } else if (c == q) {
        s->remove_prefix(i + 1);
        return true;
      } else if (q == '"' && c == '\\' && i + 1 < s->size()) {
        char e = (*s)[++i];
        if (e != '\\' && e != '"' && e != 'n' && e != 't')
          return *why = std::string("unsupported escape \\") + e, false;
        out->push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
      } else {
        out->push_back(c);
      }
    }
    return *why = "a quoted string is not closed on its line", false;
  }
  if (std::string_view("{}&*!|>%@`?").find(q) != std::string_view::npos)
    return *why =
               std::string("'") + q + "' starts YAML this file has no use for",
           false;
  size_t end = 0;
  while (end < s->size() && stops.find((*s)[end]) == std::string_view::npos &&
         !(end > 0 && (*s)[end] == '#' && IsSpace((*s)[end - 1])))
    ++end;
  *out = std::string(YamlTrim(s->substr(0, end)));
  s->remove_prefix(end);
  return true;
}

// "[a, 'b', 2]" into *items.
bool FlowList(std::string_view s, std::vector<std::string>* items,
              std::string* why) {
  s.remove_prefix(1);  // '['
  if (YamlTrim(s).starts_with(']')) {
    if (!YamlRestIsEmpty(YamlTrim(s).substr(1)))
      return *why = "text after the list", false;
    return true;
  }
  while (true) {
    std::string item;
    if (!Scalar(&s, ",]", &item, why)) return false;
    if (item.empty()) return *why = "an empty list item", false;
    items->push_back(std::move(item));
    s = YamlTrim(s);
    if (s.empty()) return *why = "a list is not closed on its line", false;
    char c = s.front();
    s.remove_prefix(1);
    if (c == ']') break;
  }
  if (!YamlRestIsEmpty(s)) return *why = "text after the list", false;
  return true;
}

class Parser {
 public:
  explicit Parser(std::string_view subject) : subject_(subject) {}

  Status Line(std::string_view line) {
    ++no_;
    if (line.find('\0') != std::string_view::npos) return Bad("a NUL byte");
    std::string_view t = YamlTrim(line);
    if (t.empty() || t.front() == '#') return Status::Ok();
    if (t == "---" && !started_) return Status::Ok();
    if (t == "---" || t == "...") return Bad("a second YAML document");
    started_ = true;
    size_t indent = line.find_first_not_of(" \t");
    if (line.substr(0, indent).find('\t') != std::string_view::npos)
      return Bad("a tab in the indentation");
    bool item = t == "-" || t.starts_with("- ");
    if (pending_ && item && indent >= key_indent_ &&
        (single_ || indent > seq_indent_)) {
      std::string v, why;
      std::string_view rest = t.substr(1);
      if (!Scalar(&rest, "", &v, &why) || v.empty() || !YamlRestIsEmpty(rest))
        return Bad(why.empty() ? "an empty list item" : why);
      pending_->push_back(std::move(v));
      pending_filled_ = true;
      return Status::Ok();
    }
    LOCKSTEP_RETURN_IF_ERROR(EndList());
    return item ? Item(line, indent) : KeyLine(t, indent);
  }

  StatusOr<Entries> Finish() {
    LOCKSTEP_RETURN_IF_ERROR(EndList());
    LOCKSTEP_RETURN_IF_ERROR(EndEntry());
    if (out_.empty()) {
      return Status::Corruption(subject_,
                                std::string("no mapping entries") + kForm);
    }
    return std::move(out_);
  }

 private:
  Status Bad(const std::string& why) const {
    return Status::Corruption(
        subject_, "line " + std::to_string(no_) + ": " + why + kForm);
  }

  // "- key: value" at `indent`: a new entry.
  Status Item(std::string_view line, size_t indent) {
    if (single_) return Bad("a list item where a key was expected");
    if (!out_.empty() && indent != seq_indent_)
      return Bad("an entry indented unlike the first");
    LOCKSTEP_RETURN_IF_ERROR(EndEntry());
    seq_indent_ = indent;
    StartEntry();
    std::string_view rest = line.substr(indent + 1);
    size_t key_at = rest.find_first_not_of(" \t");
    if (key_at == std::string_view::npos || rest[key_at] == '#') {
      key_indent_ = 0;  // the first key on the next line sets it
      return Status::Ok();
    }
    key_indent_ = indent + 1 + key_at;
    return KeyValue(YamlTrim(rest));
  }

  Status KeyLine(std::string_view t, size_t indent) {
    if (out_.empty() && !in_entry_ && indent == 0) {
      single_ = true;  // the documented layout: one entry, no `- `
      StartEntry();
      key_indent_ = 0;
    } else if (!in_entry_) {
      return Bad("a key outside an entry");
    } else if (key_indent_ == 0 && !single_ && indent > seq_indent_) {
      key_indent_ = indent;
    } else if (indent != key_indent_) {
      return Bad("a key indented unlike the entry's first key");
    }
    return KeyValue(t);
  }

  Status KeyValue(std::string_view t) {
    size_t colon = t.find(':');
    while (colon != std::string_view::npos && colon + 1 < t.size() &&
           !IsSpace(t[colon + 1]))
      colon = t.find(':', colon + 1);
    if (colon == std::string_view::npos) return Bad("expected `key: value`");
    std::string key(YamlTrim(t.substr(0, colon)));
    std::string_view value = YamlTrim(t.substr(colon + 1));
    std::string canonical =
        key.ends_with("_outputs") ? key.substr(0, key.size() - 1) : key;
    if (!seen_.insert(canonical).second)
      return Bad("'" + key + "' is given twice in one entry");
    ApiMappingEntry& e = out_.back();
    if (key == "ms_api" || key == "pt_api") {
      std::string v, why;
      if (!Scalar(&value, "", &v, &why)) return Bad(why);
      if (!YamlRestIsEmpty(value)) return Bad("text after the value of " + key);
      if (v.empty()) return Bad("'" + key + "' has no value");
      (key == "ms_api" ? e.ms_api : e.pt_api) = std::move(v);
      return Status::Ok();
    }
    std::optional<ListKey> list = ListKeyOf(key);
    if (!list) {
      return Bad("unknown key '" + key +
                 "' (the keys are ms_api, pt_api and ms_/pt_ args, output, "
                 "parameters, parameters_grad)");
    }
    auto& items = (list->ms ? e.ms : e.pt)[static_cast<int>(list->term)];
    if (YamlRestIsEmpty(value)) {
      pending_ = &items;
      pending_key_ = key;
      pending_filled_ = false;
      return Status::Ok();
    }
    std::string why;
    if (value.front() != '[')
      return Bad("'" + key + "' must be a list ([0, 1])");
    if (!FlowList(value, &items, &why)) return Bad(why);
    return Status::Ok();
  }

  Status EndList() {
    if (pending_ && !pending_filled_)
      return Bad("'" + pending_key_ + "' has no items (write [] for none)");
    pending_ = nullptr;
    return Status::Ok();
  }

  void StartEntry() {
    out_.emplace_back();
    out_.back().line = no_;
    in_entry_ = true;
    seen_.clear();
  }

  Status EndEntry() {
    if (!in_entry_) return Status::Ok();
    const ApiMappingEntry& e = out_.back();
    if (e.ms_api.empty() || e.pt_api.empty()) {
      return Status::Corruption(
          subject_, "the entry at line " + std::to_string(e.line) + " has no " +
                        (e.ms_api.empty() ? "ms_api" : "pt_api") + kForm);
    }
    in_entry_ = false;
    return Status::Ok();
  }

  std::string_view subject_;
  Entries out_;
  int no_ = 0;
  bool started_ = false, single_ = false, in_entry_ = false;
  size_t seq_indent_ = 0, key_indent_ = 0;
  std::set<std::string> seen_;                   // the current entry's keys
  std::vector<std::string>* pending_ = nullptr;  // a block list being read
  std::string pending_key_;
  bool pending_filled_ = false;
};

}  // namespace

StatusOr<Entries> ParseApiMappingFile(std::string_view text,
                                      std::string_view subject) {
  Parser p(subject);
  while (!text.empty()) {
    size_t nl = text.find('\n');
    LOCKSTEP_RETURN_IF_ERROR(p.Line(text.substr(0, nl)));
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return p.Finish();
}

StatusOr<Entries> ReadApiMappingFile(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParseApiMappingFile(*text, path);
}

}  // namespace lockstep
