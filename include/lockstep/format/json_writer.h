// Writing PyValue trees as JSON text byte-identical to Python's
// json.dump(obj, f, indent=1) — how msprobe writes dump.json, stack.json and
// construct.json — so that msprobe's tools, and diffs, see what they expect:
//
//   - indent >= 0: each list item / dict member on its own line, indented by
//     `indent` spaces per level, separators "," and ": "; empty containers
//     as "[]" and "{}". indent < 0 is Python's indent=None: one line with
//     ", " and ": ".
//   - ensure_ascii: '"' '\\' \b \f \n \r \t escaped short, other characters
//     below 0x20 and everything outside ' '..'~' as \u00XX / \uXXXX (lower
//     case hex), characters beyond U+FFFF as surrogate pairs. A surrogate
//     stored as 3 bytes (ED A0..BF xx, how the reader keeps a lone "\udc00")
//     is written as its escape, as Python writes a lone surrogate. Other
//     bytes that are not UTF-8 are written as \ufffd (Python strings cannot
//     hold them; lockstep's reader never produces them).
//   - floats as Python's repr ("0.1", "1e-05", "1e+16", "-0.0"); NaN,
//     Infinity, -Infinity as Python's allow_nan tokens; ints and BigInts as
//     their digits; True/False/None as true/false/null.
//
// Thread safety: pure functions.
#ifndef LOCKSTEP_FORMAT_JSON_WRITER_H_
#define LOCKSTEP_FORMAT_JSON_WRITER_H_

#include <string>
#include <string_view>

#include "lockstep/format/pyvalue.h"

namespace lockstep {

// json.dumps(v, indent=indent).
std::string ToPyJson(const PyValue& v, int indent = 1);

// Appends the text of `v` as it appears nested `level` containers deep in a
// document written with `indent` (its inner lines are indented by
// indent * (level + 1) spaces, its closing bracket by indent * level).
// Lets a writer emit a big document piece by piece.
// REQUIRES: out != nullptr; level >= 0.
void AppendPyJson(const PyValue& v, int indent, int level, std::string* out);

// A JSON string literal, quotes included, with ensure_ascii escapes.
void AppendPyJsonString(std::string_view s, std::string* out);

// A float as json.dumps writes it: repr(), or NaN / Infinity / -Infinity.
void AppendPyJsonFloat(double d, std::string* out);

// Late floats: a writer on a busy thread may put kLateFloatMark and the 16
// hex digits of a double's bits where the float's text belongs (cheap),
// and leave the formatting to whoever turns the text into JSON with
// AppendExpandingLateFloats (the probe: its writer thread). JSON text never
// holds a raw byte below 0x20, so the mark is unambiguous.
inline constexpr char kLateFloatMark = '\x03';
void AppendLateFloat(double d, std::string* out);
// Appends `text` with each late float replaced by AppendPyJsonFloat's text
// (a malformed one, cut short, by null).
void AppendExpandingLateFloats(std::string_view text, std::string* out);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_JSON_WRITER_H_
