// The pieces of YAML's block style that lockstep's YAML readers share
// (yaml_mapping.cc: the flat data mapping and the two-level layer mapping):
// trimming and reading one scalar, plain or quoted, from a line.
// Private to the format layer.
// Thread safety: pure functions.
#ifndef LOCKSTEP_SRC_FORMAT_YAML_SCALAR_H_
#define LOCKSTEP_SRC_FORMAT_YAML_SCALAR_H_

#include <string>
#include <string_view>

namespace lockstep::yaml_detail {

// A space or a tab: what separates tokens on a line.
inline bool YamlBlank(char c) { return c == ' ' || c == '\t'; }

// `s` without blanks and '\r' at either end.
std::string_view YamlTrim(std::string_view s);

// Reads one scalar at the start of `*s` (after blanks): a quoted string
// ('single' with '' for a quote, "double" with \n \t \\ \" \/ escapes), or
// a plain one that ends at the `: ` of a key (`key` true) or at a ` #`
// comment or the line's end (a value). Advances `*s` past it and sets
// `*quoted`. Returns false with `*why` set when the text is not a scalar
// of this subset: a quote not closed, an unknown escape, an indicator
// (`[`, `{`, `&`, `*`, `-`, ...) that starts another construct, a key
// without `: `, or a plain value holding `: `.
bool ReadYamlScalar(std::string_view* s, bool key, std::string* out,
                    bool* quoted, std::string* why);

// True when `s` is empty or a `#` comment (after blanks).
bool YamlRestIsEmpty(std::string_view s);

}  // namespace lockstep::yaml_detail

#endif  // LOCKSTEP_SRC_FORMAT_YAML_SCALAR_H_
