// ParseYamlMapping: the block-style, one-level subset of YAML that
// msprobe's data_mapping.yaml files use (see the header).
#include "lockstep/format/yaml_mapping.h"

#include <unordered_set>

#include "lockstep/core/file.h"

namespace lockstep {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (IsSpace(s.front()) || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (IsSpace(s.back()) || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Reads one scalar at the start of `s` (after spaces): a quoted string, or
// a plain one ending at `stop` (": " for keys, a " #" comment or the end
// for values). Advances `s` past it. Returns false with `why` set.
bool Scalar(std::string_view* s, bool key, std::string* out, std::string* why) {
  *s = Trim(*s);
  out->clear();
  if (s->empty()) {
    *why = key ? "a key is missing" : "a value is missing";
    return false;
  }
  char q = s->front();
  if (q == '\'' || q == '"') {
    size_t i = 1;
    for (; i < s->size(); ++i) {
      char c = (*s)[i];
      if (c == q) {
        if (q == '\'' && i + 1 < s->size() && (*s)[i + 1] == '\'') {
          out->push_back('\'');  // '' is a quote inside '...'
          ++i;
          continue;
        }
        break;
      }
      if (q == '"' && c == '\\') {
        if (i + 1 >= s->size()) break;
        char e = (*s)[++i];
        switch (e) {
          case 'n':
            out->push_back('\n');
            break;
          case 't':
            out->push_back('\t');
            break;
          case '\\':
          case '"':
          case '/':
            out->push_back(e);
            break;
          default:
            *why = std::string("unsupported escape \\") + e;
            return false;
        }
        continue;
      }
      out->push_back(c);
    }
    if (i >= s->size()) {
      *why = "a quoted string is not closed on its line";
      return false;
    }
    s->remove_prefix(i + 1);
    return true;
  }
  // Plain scalars: YAML's indicators that would start something else.
  if (std::string_view("[]{}&*!|>%@`-?,").find(q) != std::string_view::npos &&
      !(q == '-' && s->size() > 1 && !IsSpace((*s)[1]))) {
    *why = std::string("'") + q +
           "' starts a YAML construct a flat mapping does not have";
    return false;
  }
  size_t end = s->size();
  if (key) {
    size_t colon = std::string_view::npos;
    for (size_t i = 0; i < s->size(); ++i) {
      if ((*s)[i] == ':' && (i + 1 == s->size() || IsSpace((*s)[i + 1]))) {
        colon = i;
        break;
      }
    }
    if (colon == std::string_view::npos) {
      *why = "expected `key: value`";
      return false;
    }
    end = colon;
  } else {
    for (size_t i = 0; i + 1 < s->size(); ++i) {
      if (IsSpace((*s)[i]) && (*s)[i + 1] == '#') {
        end = i;
        break;
      }
    }
  }
  *out = std::string(Trim(s->substr(0, end)));
  s->remove_prefix(end);
  if (!key && out->find(": ") != std::string::npos) {
    *why = "a value holds ': ' (a nested mapping?); quote it";
    return false;
  }
  return true;
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
    std::string_view t = Trim(line);
    if (t.empty() || t.front() == '#') continue;
    if (!body && t == "---") continue;
    if (t == "{}" && !body && out.empty()) {
      body = true;  // the empty mapping
      continue;
    }
    if (IsSpace(line.front())) return bad("indented (nesting is not read)");
    if (t == "..." || t == "---") return bad("a second YAML document");
    body = true;
    std::string key, value, why;
    std::string_view rest = t;
    if (!Scalar(&rest, /*key=*/true, &key, &why)) return bad(why);
    rest = Trim(rest);
    if (rest.empty() || rest.front() != ':')
      return bad("expected ':' after the key");
    rest.remove_prefix(1);
    if (Trim(rest).empty() || Trim(rest).front() == '#')
      return bad("no value for '" + key + "' (nested mappings are not read)");
    if (!Scalar(&rest, /*key=*/false, &value, &why)) return bad(why);
    rest = Trim(rest);
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

}  // namespace lockstep
