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
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/pyvalue.h"
#include "lockstep/format/read_budget.h"

namespace lockstep {

// Deepest nesting of lists and dicts accepted.
inline constexpr int kMaxJsonDepth = 512;

// Parses one JSON document (leading and trailing whitespace allowed, nothing
// else after it). `subject` names the text in error messages (a path).
// Never crashes on any input; errors are Corruption, and NotSupported past
// `limits` (read_budget.h): a string, key or number longer than
// string_bytes, or more than `objects` values in the text. Memory stays
// within a small multiple of the text's size and 2 * string_bytes.
StatusOr<PyValue> ParsePyJson(std::string_view text, std::string_view subject,
                              const ReadLimits& limits = {});

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
                                       bool* needs_tree,
                                       const ReadLimits& limits = {});

// One member's values for the fast reader (ParseJsonMembersFast): nodes
// whose children lie side by side, strings in one buffer. Read through
// JsonNode.
class JsonTree {
 public:
  struct Node {
    PyValue::Kind kind = PyValue::Kind::kNone;
    bool big = false;                   // a big int: digits at str_off
    uint32_t n = 0;                     // items or members
    uint32_t first = 0;                 // the first child in nodes
    uint32_t key_off = 0, key_len = 0;  // its key in text, as a member
    uint32_t str_off = 0, str_len = 0;  // a str's text
    union {  // the widest member first: `num{}` zeroes all 8 bytes
      int64_t i;
      bool b;
      double d;
    } num{};
  };
  std::vector<Node> nodes;
  std::string text;
};

// One value of a JsonTree: a view, valid while its tree is (see
// ParseJsonMembersFast). Typed as ParsePyJson types values.
class JsonNode {
 public:
  JsonNode(const JsonTree* tree, uint32_t index) : t_(tree), i_(index) {}
  PyValue::Kind kind() const { return node().kind; }
  bool is_none() const { return kind() == PyValue::Kind::kNone; }
  // A str's text, or a big int's digits; "" for other kinds.
  std::string_view as_str() const {
    const JsonTree::Node& n = node();
    if (n.kind != PyValue::Kind::kStr && !n.big) return {};
    return std::string_view(t_->text).substr(n.str_off, n.str_len);
  }
  bool as_bool() const;
  int64_t as_int() const;    // as PyValue::as_int
  double as_double() const;  // as PyValue::as_double
  // A list's items or a dict's members (0 for other kinds).
  size_t size() const {
    const JsonTree::Node& n = node();
    bool container =
        n.kind == PyValue::Kind::kList || n.kind == PyValue::Kind::kDict;
    return container ? n.n : 0;
  }
  // REQUIRES: k < size()
  JsonNode item(size_t k) const {
    return JsonNode(t_, node().first + static_cast<uint32_t>(k));
  }
  // A dict's; REQUIRES: k < size()
  std::string_view key(size_t k) const {
    const JsonTree::Node& c = t_->nodes[node().first + k];
    return std::string_view(t_->text).substr(c.key_off, c.key_len);
  }
  // The same value as a PyValue (a copy).
  PyValue ToPyValue() const;

 private:
  const JsonTree::Node& node() const { return t_->nodes[i_]; }
  const JsonTree* t_;
  uint32_t i_;
};

// Receives one member of the streamed dict as a JsonNode (valid during the
// call only) and the bytes of text parsed so far.
using JsonNodeSink =
    std::function<Status(std::string_view key, JsonNode value, size_t parsed)>;

// What ParseJsonMembersFast decided.
struct FastMembers {
  // False: the text holds something only ParsePyJsonStreaming decides
  // (below); nothing else here is meaningful then.
  bool decided = false;
  // The top-level dict's members in text order as Python values, the
  // streamed one an empty dict.
  std::vector<std::pair<std::string, PyValue>> top;
};

// ParsePyJsonStreaming for well-formed text, several times faster: each
// member of the dict at the top-level key `key` is built in one block that
// is reused for the next (no allocation per value) and handed to `sink`.
// Leaves the decision to ParsePyJsonStreaming (decided == false; parse the
// text again with it, after dropping what the sink was given) when the text
// is not a dict whose `key` is a dict of dicts, or holds a syntax error, a
// repeated key or member name, nesting beyond kMaxJsonDepth or a value
// beyond 4 GiB, or anything past `limits` (ParsePyJson; a string far beyond
// limits.string_bytes is found before it is copied whole). A status that is
// not ok from the sink stops the parse and is returned.
StatusOr<FastMembers> ParseJsonMembersFast(std::string_view text,
                                           std::string_view key,
                                           const JsonNodeSink& sink,
                                           const ReadLimits& limits = {});

// Python's way of naming a place in text: 1-based line and column of byte
// `offset` ("line 3 column 5 (char 20)"). Columns count bytes.
// REQUIRES: offset <= text.size().
std::string JsonTextPosition(std::string_view text, size_t offset);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_JSON_READER_H_
