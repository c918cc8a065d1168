// A flat YAML mapping of strings to strings: msprobe compare's -dm
// data_mapping.yaml ({target row name: baseline row name}). Only the subset
// such files use is read: one `key: value` per line (block style), keys and
// values plain or quoted ('single', "double" with \-escapes), `#` comments
// and blank lines, an optional leading `---`, and the empty file (`{}`).
// Anything else (nesting, lists, anchors, multi-line values, flow style
// with entries) is refused with its line, never guessed at.
//
// Thread safety: a pure function.
#ifndef LOCKSTEP_FORMAT_YAML_MAPPING_H_
#define LOCKSTEP_FORMAT_YAML_MAPPING_H_

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

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_YAML_MAPPING_H_
