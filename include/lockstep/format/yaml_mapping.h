// Small YAML mappings of strings, the subsets msprobe compare's files use:
//  - flat: the -dm data_mapping.yaml ({target row name: baseline row
//    name}), one `key: value` per line;
//  - two-level: the -lm layer mapping ({Type: {child: target}}), `key:`
//    lines at the start of a line, each followed by its `key: value` lines,
//    indented alike.
// Block style only: keys and values plain or quoted ('single', "double"
// with \-escapes), `#` comments and blank lines, an optional leading
// `---`, and the empty mapping `{}`. Anything else (deeper nesting, lists,
// anchors, multi-line values, flow style with entries) is refused with its
// line, never guessed at.
//
// Thread safety: pure functions.
#ifndef LOCKSTEP_FORMAT_YAML_MAPPING_H_
#define LOCKSTEP_FORMAT_YAML_MAPPING_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

// The pairs in file order. Errors: Corruption naming `subject`, the line
// and what is wrong (a repeated key is an error: which one was meant?).
StatusOr<std::vector<std::pair<std::string, std::string>>> ParseYamlMapping(
    std::string_view text, std::string_view subject);

// Reads and parses `path`. Errors: NotFound/IoError, or as above.
StatusOr<std::vector<std::pair<std::string, std::string>>> ReadYamlMapping(
    const std::string& path);

// How PyYAML's safe_load (YAML 1.1, msprobe's reader) types a scalar. A
// quoted scalar is always a str; a plain one is what its text resolves to:
// null (``, `~`, `null`), a bool (`yes`, `off`, `True`, ...), an int (`0`,
// `0x1f`, `1_000`, `1:30`), a float (`1.5`, `.5`, `1.0e+5`, `.inf`), a date
// (`2001-12-14`), or kRefused for `=` and `<<` (tags safe_load refuses).
enum class YamlType { kStr, kNull, kBool, kInt, kFloat, kTimestamp, kRefused };

// The type of the plain (unquoted) scalar `text`, as above.
YamlType PlainYamlType(std::string_view text);

// For messages: "a str", "null", "a bool", "an int", "a float", "a date",
// "a tag YAML refuses".
const char* YamlTypeName(YamlType type);

// One scalar of a two-level mapping: its text (unquoted, unescaped), its
// YAML type, and its line (from 1).
struct YamlScalar {
  std::string text;
  YamlType type = YamlType::kStr;
  size_t line = 0;
};

// One top-level key of a two-level mapping and its value: either a mapping
// (the indented `key: value` lines below it, or `{}` on its line), or a
// scalar on its own line (type kNull with empty text when the key has
// neither: `Type:` alone).
struct YamlSection {
  YamlScalar key;
  bool is_mapping = false;
  YamlScalar scalar;                                       // when !is_mapping
  std::vector<std::pair<YamlScalar, YamlScalar>> entries;  // when is_mapping
};

// A two-level mapping in file order. `null_document` when the text holds
// nothing but comments, blank lines and `---` (YAML's null document, not
// the empty mapping `{}`).
struct YamlTwoLevel {
  bool null_document = false;
  std::vector<YamlSection> sections;
};

// Parses the two-level subset. Errors: Corruption naming `subject`, the
// line and what is wrong: a list, a third level, indentation that differs
// within a section or has tabs, a key repeated within its mapping (same
// text and type), a scalar with indented lines below it.
StatusOr<YamlTwoLevel> ParseYamlTwoLevel(std::string_view text,
                                         std::string_view subject);

// Reads and parses `path`. Errors: NotFound/IoError, or as above.
StatusOr<YamlTwoLevel> ReadYamlTwoLevel(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_YAML_MAPPING_H_
