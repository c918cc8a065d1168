// Reading JSON text into PyValue trees the way Python's json.loads() types
// it, so that values print exactly as msprobe (Python) prints them:
//
//   - "1", "-0", "123456789012345678901234567890" are ints (beyond int64 a
//     BigInt that keeps its digits); "1.0", "1e5", "1E-3" are floats,
//     correctly rounded (ties to even), like Python's float();
//   - NaN, Infinity and -Infinity (Python's non-standard tokens) are floats;
//   - objects keep their key order; a repeated key keeps its first position
//     and takes the last value, as a Python dict does;
//   - strings are UTF-8; \uXXXX escapes (with surrogate pairs) are decoded.
//
// Differences from Python, all on inputs no dump writer produces:
//   - literals beyond the double range with more than ~308 digits or an
//     exponent above ~308 are rejected as Corruption (Python: inf or a huge
//     int);
//   - a lone high surrogate escape ("\ud800" not followed by a low one) is
//     rejected; a lone low one ("\udc00") is kept as its 3-byte "WTF-8"
//     form, which json_writer.h writes back as "\udc00", as Python does;
//   - nesting is limited to kMaxJsonDepth levels (Python: RecursionError
//     near 1000);
//   - invalid UTF-8 is rejected (as Python's decoding of the file would be).
//
// Errors are Corruption and give the place, Python style, plus the open
// containers around it:
//   "x.json: line 3 column 5 (char 20): Missing a comma or ']' after an array
//    element, inside ['data']['Functional.linear.0.forward']['output'],
//    after the element [0]"
// The column is where the text stops making sense (Python points at the
// start of the bad value instead).
// Text that ends in the middle of a value is reported as truncated, with the
// containers left open and how many complete members the outermost one had.
//
// Thread safety: pure functions.
#ifndef LOCKSTEP_FORMAT_JSON_READER_H_
#define LOCKSTEP_FORMAT_JSON_READER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/format/pyvalue.h"

namespace lockstep {

// Deepest nesting of lists and dicts accepted.
inline constexpr int kMaxJsonDepth = 512;

// Parses one JSON document (leading and trailing whitespace allowed, nothing
// else after it). `subject` names the text in error messages (a path).
// Never crashes on any input; errors are Corruption.
StatusOr<PyValue> ParsePyJson(std::string_view text, std::string_view subject);

// Receives one member of a streamed dict: its key, its value, and the bytes
// of text parsed so far (for progress). A status that is not ok stops the
// parse and is returned by ParsePyJsonStreaming.
using JsonMemberSink =
    std::function<Status(std::string key, PyValue value, size_t parsed)>;

// As ParsePyJson, but when the top level is a dict whose member `key` is a
// dict, that dict's members go to `sink` one by one, in text order, as each
// value completes, and stay out of the tree (the member is left an empty
// dict). Memory is then that of one member instead of the whole document.
// Python keeps the first position and the last value of a repeated key,
// which a stream cannot give: when the streamed dict repeats a key (or the
// top level repeats `key`), the parse stops, *needs_tree is set and the
// result is an error; parse the text with ParsePyJson instead (the sink has
// seen some members already). Errors otherwise as ParsePyJson, with the
// sink's own status when it stopped the parse.
StatusOr<PyValue> ParsePyJsonStreaming(std::string_view text,
                                       std::string_view subject,
                                       std::string_view key,
                                       const JsonMemberSink* sink,
                                       bool* needs_tree);

// Python's way of naming a place in text: 1-based line and column of byte
// `offset` ("line 3 column 5 (char 20)"). Columns count bytes.
// REQUIRES: offset <= text.size().
std::string JsonTextPosition(std::string_view text, size_t offset);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_JSON_READER_H_
