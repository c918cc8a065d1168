// What the two JSON readers share: the general one (json_reader.cc:
// ParsePyJson, ParsePyJsonStreaming) and the fast one (json_fast_reader.cc:
// ParseJsonMembersFast). rapidjson's parse flags (numbers arrive as raw
// text, so that ints and floats are told apart by their syntax, as Python
// does), the ASCII check that skips UTF-8 validation, and Python's typing
// of a number's text. Private to src/format.
// Thread safety: pure functions.
#ifndef LOCKSTEP_SRC_FORMAT_JSON_READER_INTERNAL_H_
#define LOCKSTEP_SRC_FORMAT_JSON_READER_INTERNAL_H_

#include <rapidjson/reader.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "lockstep/format/pyvalue.h"

namespace lockstep::json_internal {

inline constexpr unsigned kParseFlags = rapidjson::kParseNumbersAsStringsFlag |
                                        rapidjson::kParseNanAndInfFlag |
                                        rapidjson::kParseValidateEncodingFlag;
// For ASCII text, which is valid UTF-8 whatever it holds: the same parse
// without the per-character check (dump.json files are ASCII, as Python's
// json.dump writes them by default).
inline constexpr unsigned kParseAsciiFlags =
    kParseFlags & ~static_cast<unsigned>(rapidjson::kParseValidateEncodingFlag);

inline bool IsAscii(std::string_view text) {
  const char* p = text.data();
  size_t n = text.size(), i = 0;
  uint64_t high = 0;
  for (; i + 32 <= n; i += 32) {  // four words a step: vectorised
    uint64_t w[4];
    std::memcpy(w, p + i, sizeof(w));
    high |= w[0] | w[1] | w[2] | w[3];
  }
  for (; i < n; ++i) high |= static_cast<unsigned char>(p[i]);
  return (high & 0x8080808080808080ull) == 0;
}

using Fields = std::vector<std::pair<std::string, PyValue>>;

// A JSON number's text as Python's json module reads it: int unless it has
// a fraction or an exponent.
inline PyValue NumberFromText(std::string_view t) {
  const char* b = t.data();
  const char* e = b + t.size();
  bool is_int = true;
  for (char c : t) is_int = is_int && c != '.' && c != 'e' && c != 'E';
  if (is_int) {
    int64_t i = 0;
    auto r = std::from_chars(b, e, i);
    if (r.ec == std::errc() && r.ptr == e) return PyValue::Int(i);
    return PyValue::BigInt(std::string(t));  // beyond int64
  }
  double d = 0;
  auto r = std::from_chars(b, e, d);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow to +-inf or underflow to +-0, as Python's float() gives.
    d = std::strtod(std::string(t).c_str(), nullptr);
  }
  return PyValue::Float(d);
}

}  // namespace lockstep::json_internal

#endif  // LOCKSTEP_SRC_FORMAT_JSON_READER_INTERNAL_H_
