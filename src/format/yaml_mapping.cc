// ParseYamlMapping and ParseYamlTwoLevel: the block-style subsets of YAML
// that msprobe's data_mapping.yaml and layer mapping files use (see the
// header).
#include "lockstep/format/yaml_mapping.h"

#include <set>
#include <unordered_set>

#include "lockstep/core/file.h"
#include "yaml_scalar.h"

namespace lockstep {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;
using yaml_detail::ReadYamlScalar;
using yaml_detail::YamlBlank;
using yaml_detail::YamlRestIsEmpty;
using yaml_detail::YamlTrim;

constexpr char kTwoLevelHint[] =
    " (expected `key:` lines, each followed by its indented `name: value` "
    "lines)";

// A line starts a block sequence: `-` alone or before a blank.
bool IsListItem(std::string_view t) {
  return t == "-" || (t.size() > 1 && t[0] == '-' && YamlBlank(t[1]));
}

// Reads a two-level mapping line by line (ParseYamlTwoLevel).
class TwoLevelParser {
 public:
  explicit TwoLevelParser(std::string_view subject) : subject_(subject) {}

  // One line (without its '\n'), numbered from 1.
  Status Take(size_t no, std::string_view line);

  YamlTwoLevel Finish() {
    out_.null_document = !body_;
    return std::move(out_);
  }

 private:
  Status Bad(size_t no, const std::string& why) const {
    return Status::Corruption(
        subject_, "line " + std::to_string(no) + ": " + why + kTwoLevelHint);
  }
  Status TopLine(size_t no, std::string_view t);
  Status ChildLine(size_t no, size_t indent, std::string_view t);
  Status Key(size_t no, std::string_view* rest, YamlScalar* key) const;
  Status Value(size_t no, std::string_view rest, YamlScalar* value) const;

  std::string_view subject_;
  YamlTwoLevel out_;
  bool body_ = false;   // a line other than comments, blanks and `---`
  bool empty_ = false;  // the document is `{}`
  bool open_ = false;   // the last section may take indented lines
  size_t child_indent_ = 0;
  std::set<std::pair<YamlType, std::string>> top_keys_, child_keys_;
};

Status TwoLevelParser::Take(size_t no, std::string_view line) {
  if (line.find('\0') != std::string_view::npos) return Bad(no, "a NUL byte");
  std::string_view t = YamlTrim(line);
  if (t.empty() || t.front() == '#') return Status::Ok();
  size_t indent = line.find_first_not_of(' ');
  if (line[indent] == '\t') return Bad(no, "a tab in the indentation");
  if (indent > 0) return ChildLine(no, indent, t);
  if (!body_ && t == "---") return Status::Ok();
  if (t == "..." || t == "---") return Bad(no, "a second YAML document");
  if (empty_) return Bad(no, "text after `{}`");
  if (t == "{}" && !body_) {
    body_ = empty_ = true;
    return Status::Ok();
  }
  body_ = true;
  return TopLine(no, t);
}

Status TwoLevelParser::Key(size_t no, std::string_view* rest,
                           YamlScalar* key) const {
  std::string why;
  bool quoted = false;
  if (!ReadYamlScalar(rest, /*key=*/true, &key->text, &quoted, &why))
    return Bad(no, why);
  if (!quoted && key->text.empty()) return Bad(no, "a key is missing");
  key->type = quoted ? YamlType::kStr : PlainYamlType(key->text);
  key->line = no;
  *rest = YamlTrim(*rest);
  if (rest->empty() || rest->front() != ':')
    return Bad(no, "expected ':' after the key");
  rest->remove_prefix(1);
  return Status::Ok();
}

// A scalar value and nothing after it but a comment.
Status TwoLevelParser::Value(size_t no, std::string_view rest,
                             YamlScalar* value) const {
  std::string why;
  bool quoted = false;
  if (!ReadYamlScalar(&rest, /*key=*/false, &value->text, &quoted, &why))
    return Bad(no, why);
  if (!YamlRestIsEmpty(rest)) return Bad(no, "text after a value");
  value->type = quoted ? YamlType::kStr : PlainYamlType(value->text);
  value->line = no;
  return Status::Ok();
}

// True when `rest` is `{}` and maybe a comment.
bool IsEmptyFlow(std::string_view rest) {
  rest = YamlTrim(rest);
  return rest.starts_with("{}") && YamlRestIsEmpty(rest.substr(2));
}

Status TwoLevelParser::TopLine(size_t no, std::string_view t) {
  if (IsListItem(t)) return Bad(no, "a list; expected a mapping");
  YamlSection s;
  LOCKSTEP_RETURN_IF_ERROR(Key(no, &t, &s.key));
  if (!top_keys_.emplace(s.key.type, s.key.text).second)
    return Bad(no, "'" + s.key.text + "' is given twice");
  s.scalar = YamlScalar{"", YamlType::kNull, no};
  open_ = YamlRestIsEmpty(t);
  if (IsEmptyFlow(t)) {
    s.is_mapping = true;
  } else if (!open_) {
    LOCKSTEP_RETURN_IF_ERROR(Value(no, t, &s.scalar));
  }
  child_indent_ = 0;
  child_keys_.clear();
  out_.sections.push_back(std::move(s));
  return Status::Ok();
}

Status TwoLevelParser::ChildLine(size_t no, size_t indent, std::string_view t) {
  if (out_.sections.empty()) return Bad(no, "indented, but under no key");
  YamlSection& s = out_.sections.back();
  if (!open_) {
    return Bad(no, "indented under '" + s.key.text +
                       "', which has a value on its line");
  }
  if (child_indent_ == 0) child_indent_ = indent;
  if (indent > child_indent_) return Bad(no, "a third level of nesting");
  if (indent < child_indent_)
    return Bad(no, "indented less than the lines above it");
  if (IsListItem(t)) return Bad(no, "a list under '" + s.key.text + "'");
  std::pair<YamlScalar, YamlScalar> e;
  LOCKSTEP_RETURN_IF_ERROR(Key(no, &t, &e.first));
  if (!child_keys_.emplace(e.first.type, e.first.text).second)
    return Bad(
        no, "'" + e.first.text + "' is given twice under '" + s.key.text + "'");
  if (IsEmptyFlow(t)) return Bad(no, "a mapping as a value (a third level)");
  e.second = YamlScalar{"", YamlType::kNull, no};
  if (!YamlRestIsEmpty(t)) LOCKSTEP_RETURN_IF_ERROR(Value(no, t, &e.second));
  s.is_mapping = true;
  s.entries.push_back(std::move(e));
  return Status::Ok();
}

// Calls take(line number, line) for each line of `text`.
template <typename Take>
Status ForEachLine(std::string_view text, Take take) {
  size_t no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    LOCKSTEP_RETURN_IF_ERROR(take(++no, text.substr(0, nl)));
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Pairs> ParseYamlMapping(std::string_view text,
                                 std::string_view subject) {
  Pairs out;
  std::unordered_set<std::string> keys;
  size_t line_no = 0;
  bool body = false;  // a line other than comments, blanks and `---`
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text =
        nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    auto bad = [&](const std::string& why) {
      return Status::Corruption(
          subject, "line " + std::to_string(line_no) + ": " + why +
                       " (a data mapping is `target name: baseline name`, "
                       "one per line)");
    };
    if (line.find('\0') != std::string_view::npos) return bad("a NUL byte");
    std::string_view t = YamlTrim(line);
    if (t.empty() || t.front() == '#') continue;
    if (!body && t == "---") continue;
    if (t == "{}" && !body && out.empty()) {
      body = true;  // the empty mapping
      continue;
    }
    if (YamlBlank(line.front())) return bad("indented (nesting is not read)");
    if (t == "..." || t == "---") return bad("a second YAML document");
    body = true;
    std::string key, value, why;
    std::string_view rest = t;
    bool quoted = false;
    if (!ReadYamlScalar(&rest, /*key=*/true, &key, &quoted, &why))
      return bad(why);
    rest = YamlTrim(rest);
    if (rest.empty() || rest.front() != ':')
      return bad("expected ':' after the key");
    rest.remove_prefix(1);
    if (YamlTrim(rest).empty() || YamlTrim(rest).front() == '#')
      return bad("no value for '" + key + "' (nested mappings are not read)");
    if (!ReadYamlScalar(&rest, /*key=*/false, &value, &quoted, &why))
      return bad(why);
    rest = YamlTrim(rest);
    if (!rest.empty() && rest.front() != '#')
      return bad("text after the value of '" + key + "'");
    if (key.empty()) return bad("an empty key");
    if (!keys.insert(key).second) return bad("'" + key + "' is mapped twice");
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

StatusOr<Pairs> ReadYamlMapping(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParseYamlMapping(*text, path);
}

StatusOr<YamlTwoLevel> ParseYamlTwoLevel(std::string_view text,
                                         std::string_view subject) {
  TwoLevelParser parser(subject);
  LOCKSTEP_RETURN_IF_ERROR(ForEachLine(
      text, [&](size_t no, std::string_view l) { return parser.Take(no, l); }));
  return parser.Finish();
}

StatusOr<YamlTwoLevel> ReadYamlTwoLevel(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParseYamlTwoLevel(*text, path);
}

}  // namespace lockstep
