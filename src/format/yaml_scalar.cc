// Reading one YAML scalar from a line, and how PyYAML types a plain one.
#include "yaml_scalar.h"

#include "lockstep/format/yaml_mapping.h"

namespace lockstep {
namespace yaml_detail {
namespace {

// The text of a quoted scalar starting at (*s)[0] (the quote), unescaped
// into *out; advances *s past the closing quote.
bool ReadQuoted(std::string_view* s, std::string* out, std::string* why) {
  const char q = s->front();
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
      if (e == 'n') {
        out->push_back('\n');
      } else if (e == 't') {
        out->push_back('\t');
      } else if (e == '\\' || e == '"' || e == '/') {
        out->push_back(e);
      } else {
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

// Where a plain scalar of `s` ends: at the `:` of `key: ` for a key
// (npos when there is none), at a ` #` comment or the end for a value.
size_t PlainEnd(std::string_view s, bool key) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (key && s[i] == ':' && (i + 1 == s.size() || YamlBlank(s[i + 1])))
      return i;
    if (!key && i + 1 < s.size() && YamlBlank(s[i]) && s[i + 1] == '#')
      return i;
  }
  return key ? std::string_view::npos : s.size();
}

}  // namespace

std::string_view YamlTrim(std::string_view s) {
  while (!s.empty() && (YamlBlank(s.front()) || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (YamlBlank(s.back()) || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool YamlRestIsEmpty(std::string_view s) {
  s = YamlTrim(s);
  return s.empty() || s.front() == '#';
}

bool ReadYamlScalar(std::string_view* s, bool key, std::string* out,
                    bool* quoted, std::string* why) {
  *s = YamlTrim(*s);
  out->clear();
  *quoted = false;
  if (s->empty()) {
    *why = key ? "a key is missing" : "a value is missing";
    return false;
  }
  char q = s->front();
  if (q == '\'' || q == '"') {
    *quoted = true;
    return ReadQuoted(s, out, why);
  }
  // Plain scalars: YAML's indicators that would start something else.
  if (std::string_view("[]{}&*!|>%@`-?,").find(q) != std::string_view::npos &&
      !(q == '-' && s->size() > 1 && !YamlBlank((*s)[1]))) {
    *why = std::string("'") + q +
           "' starts a YAML construct this subset does not have";
    return false;
  }
  size_t end = PlainEnd(*s, key);
  if (end == std::string_view::npos) {
    *why = "expected `key: value`";
    return false;
  }
  *out = std::string(YamlTrim(s->substr(0, end)));
  s->remove_prefix(end);
  if (!key && out->find(": ") != std::string::npos) {
    *why = "a value holds ': ' (a nested mapping?); quote it";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// PyYAML's implicit types (its Resolver, YAML 1.1), each written as the
// pattern it resolves and matched by hand: no regex engine, whose
// backtracking recursion a long hostile scalar could overflow.
namespace {

using Sv = std::string_view;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The length of the prefix of `s` whose characters `ok` accepts.
template <typename Ok>
size_t Span(Sv s, Ok ok) {
  size_t n = 0;
  while (n < s.size() && ok(s[n])) ++n;
  return n;
}

bool AllOf(Sv s, Sv chars) { return s.find_first_not_of(chars) == Sv::npos; }

Sv DropSign(Sv s) {
  return !s.empty() && (s[0] == '-' || s[0] == '+') ? s.substr(1) : s;
}

// (:[0-5]?[0-9])+ at the start of *s, consumed; false if not one group.
bool SexagesimalGroups(Sv* s) {
  int groups = 0;
  while (!s->empty() && s->front() == ':') {
    size_t d = Span(s->substr(1), IsDigit);
    if (d == 0 || d > 2 || (d == 2 && (*s)[1] > '5')) return false;
    s->remove_prefix(1 + d);
    ++groups;
  }
  return groups > 0;
}

// [eE][-+][0-9]+ or nothing, at the end of `s`.
bool ExponentOrEnd(Sv s) {
  if (s.empty()) return true;
  if ((s[0] != 'e' && s[0] != 'E') || s.size() < 3) return false;
  if (s[1] != '-' && s[1] != '+') return false;
  return AllOf(s.substr(2), "0123456789");
}

bool IsYamlInt(Sv s) {
  s = DropSign(s);
  if (s.empty()) return false;
  if (s.starts_with("0b")) return s.size() > 2 && AllOf(s.substr(2), "01_");
  if (s.starts_with("0x"))
    return s.size() > 2 && AllOf(s.substr(2), "0123456789abcdefABCDEF_");
  if (s == "0") return true;
  if (s[0] == '0') return AllOf(s.substr(1), "01234567_");
  if (!IsDigit(s[0])) return false;
  size_t head = Span(s, [](char c) { return IsDigit(c) || c == '_'; });
  Sv rest = s.substr(head);
  return rest.empty() || (SexagesimalGroups(&rest) && rest.empty());
}

bool IsYamlFloat(Sv s) {
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return true;
  auto digits_ = [](char c) { return IsDigit(c) || c == '_'; };
  if (s.size() > 1 && s[0] == '.' && IsDigit(s[1]))  // \.[0-9][0-9_]*exp?
    return ExponentOrEnd(s.substr(1 + Span(s.substr(1), digits_)));
  s = DropSign(s);
  if (s == ".inf" || s == ".Inf" || s == ".INF") return true;
  if (s.empty() || !IsDigit(s[0])) return false;
  Sv rest = s.substr(Span(s, digits_));
  if (!rest.empty() && rest[0] == ':') {  // base 60: 1:30.5
    if (!SexagesimalGroups(&rest) || rest.empty() || rest[0] != '.')
      return false;
    return AllOf(rest.substr(1), "0123456789_");
  }
  if (rest.empty() || rest[0] != '.') return false;
  rest.remove_prefix(1);
  return ExponentOrEnd(rest.substr(Span(rest, digits_)));
}

// n digits at the start of *s (between lo and hi of them), consumed.
bool Digits(Sv* s, size_t lo, size_t hi) {
  size_t n = Span(*s, IsDigit);
  if (n < lo || n > hi) return false;
  s->remove_prefix(n);
  return true;
}

bool Skip(Sv* s, char c) {
  if (s->empty() || s->front() != c) return false;
  s->remove_prefix(1);
  return true;
}

// 2001-12-14, or 2001-12-14t21:59:43.10-05:00 (also with blanks).
bool IsYamlTimestamp(Sv s) {
  Sv d = s;
  if (Digits(&d, 4, 4) && Skip(&d, '-') && Digits(&d, 2, 2) && Skip(&d, '-') &&
      Digits(&d, 2, 2) && d.empty())
    return true;
  if (!Digits(&s, 4, 4) || !Skip(&s, '-') || !Digits(&s, 1, 2) ||
      !Skip(&s, '-') || !Digits(&s, 1, 2))
    return false;
  size_t sep = Span(s, YamlBlank);
  if (sep == 0 && !Skip(&s, 'T') && !Skip(&s, 't')) return false;
  s.remove_prefix(sep);
  if (!Digits(&s, 1, 2) || !Skip(&s, ':') || !Digits(&s, 2, 2) ||
      !Skip(&s, ':') || !Digits(&s, 2, 2))
    return false;
  if (Skip(&s, '.')) s.remove_prefix(Span(s, IsDigit));
  if (s.empty()) return true;
  s.remove_prefix(Span(s, YamlBlank));
  if (s == "Z") return true;
  if (!Skip(&s, '-') && !Skip(&s, '+')) return false;
  if (!Digits(&s, 1, 2)) return false;
  return s.empty() || (Skip(&s, ':') && Digits(&s, 2, 2) && s.empty());
}

}  // namespace
}  // namespace yaml_detail

YamlType PlainYamlType(std::string_view s) {
  using yaml_detail::IsYamlFloat;
  using yaml_detail::IsYamlInt;
  using yaml_detail::IsYamlTimestamp;
  using Sv = std::string_view;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL")
    return YamlType::kNull;
  static constexpr Sv kBools[] = {
      "yes",   "Yes",   "YES",   "no", "No", "NO", "true", "True", "TRUE",
      "false", "False", "FALSE", "on", "On", "ON", "off",  "Off",  "OFF"};
  for (Sv b : kBools) {
    if (s == b) return YamlType::kBool;
  }
  if (s == "=" || s == "<<") return YamlType::kRefused;  // value, merge
  if (IsYamlFloat(s)) return YamlType::kFloat;
  if (IsYamlInt(s)) return YamlType::kInt;
  if (IsYamlTimestamp(s)) return YamlType::kTimestamp;
  return YamlType::kStr;
}

const char* YamlTypeName(YamlType t) {
  switch (t) {
    case YamlType::kStr:
      return "a str";
    case YamlType::kNull:
      return "null";
    case YamlType::kBool:
      return "a bool";
    case YamlType::kInt:
      return "an int";
    case YamlType::kFloat:
      return "a float";
    case YamlType::kTimestamp:
      return "a date";
    case YamlType::kRefused:
      return "a tag YAML refuses";
  }
  return "?";
}

}  // namespace lockstep
