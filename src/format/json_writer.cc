#include "lockstep/format/json_writer.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "lockstep/core/check.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace {

void AppendU16Escape(uint32_t unit, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  char buf[6] = {'\\',
                 'u',
                 kHex[(unit >> 12) & 0xf],
                 kHex[(unit >> 8) & 0xf],
                 kHex[(unit >> 4) & 0xf],
                 kHex[unit & 0xf]};
  out->append(buf, sizeof(buf));
}

// Decodes one UTF-8 code point at s[*i], advancing *i; U+FFFD and one byte
// for an invalid sequence (overlong, beyond U+10FFFF, cut short).
// Surrogates (ED A0..BF xx, "WTF-8") decode to themselves: that is how the
// reader keeps a lone "\udc00" escape, and Python writes it back as such.
uint32_t DecodeUtf8(std::string_view s, size_t* i) {
  unsigned char c = static_cast<unsigned char>(s[*i]);
  int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (len == 1 || c > 0xf4 || *i + static_cast<size_t>(len) > s.size()) {
    ++*i;
    return c < 0x80 ? c : 0xfffd;
  }
  uint32_t cp = c & (0x7f >> len);
  for (int k = 1; k < len; ++k) {
    unsigned char cc =
        static_cast<unsigned char>(s[*i + static_cast<size_t>(k)]);
    if ((cc & 0xc0) != 0x80) {
      ++*i;
      return 0xfffd;
    }
    cp = (cp << 6) | (cc & 0x3f);
  }
  if (cp < kMin[len] || cp > 0x10ffff) {
    ++*i;
    return 0xfffd;
  }
  *i += static_cast<size_t>(len);
  return cp;
}

void AppendEscaped(uint32_t cp, std::string* out) {
  switch (cp) {
    case '"':
      *out += "\\\"";
      return;
    case '\\':
      *out += "\\\\";
      return;
    case '\b':
      *out += "\\b";
      return;
    case '\f':
      *out += "\\f";
      return;
    case '\n':
      *out += "\\n";
      return;
    case '\r':
      *out += "\\r";
      return;
    case '\t':
      *out += "\\t";
      return;
  }
  if (cp >= 0x20 && cp < 0x7f) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x10000) {
    AppendU16Escape(cp, out);
  } else {
    uint32_t v = cp - 0x10000;
    AppendU16Escape(0xd800 | (v >> 10), out);
    AppendU16Escape(0xdc00 | (v & 0x3ff), out);
  }
}

void NewLine(int indent, int level, std::string* out) {
  *out += '\n';
  out->append(static_cast<size_t>(indent) * static_cast<size_t>(level), ' ');
}

void AppendList(const PyValue& v, int indent, int level, std::string* out) {
  const auto& items = v.items();
  if (items.empty()) {
    *out += "[]";
    return;
  }
  *out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) *out += indent < 0 ? ", " : ",";
    if (indent >= 0) NewLine(indent, level + 1, out);
    AppendPyJson(items[i], indent, level + 1, out);
  }
  if (indent >= 0) NewLine(indent, level, out);
  *out += ']';
}

void AppendDict(const PyValue& v, int indent, int level, std::string* out) {
  const auto& fields = v.fields();
  if (fields.empty()) {
    *out += "{}";
    return;
  }
  *out += '{';
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) *out += indent < 0 ? ", " : ",";
    if (indent >= 0) NewLine(indent, level + 1, out);
    AppendPyJsonString(fields[i].first, out);
    *out += ": ";
    AppendPyJson(fields[i].second, indent, level + 1, out);
  }
  if (indent >= 0) NewLine(indent, level, out);
  *out += '}';
}

// Printable ASCII other than '"' and '\\': written as it is.
inline bool Plain(unsigned char c) {
  return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

// Whether one of the 8 bytes of w needs an escape (below 0x20, 0x7f and
// above, '"', '\\'), by bit tricks on the whole word: each test below is
// nonzero exactly when some byte qualifies (which bytes it flags may be
// off above the first that does; only whether any does is used).
constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighs = 0x8080808080808080ull;
// Nonzero iff some byte of v is 0.
inline uint64_t HasZero(uint64_t v) { return (v - kOnes) & ~v & kHighs; }
inline bool AnyNeedsEscape(uint64_t w) {
  uint64_t below_space = (w - 0x20 * kOnes) & ~w & kHighs;
  return (below_space | (w & kHighs) | HasZero(w ^ (0x7f * kOnes)) |
          HasZero(w ^ ('"' * kOnes)) | HasZero(w ^ ('\\' * kOnes))) != 0;
}

}  // namespace

void AppendPyJsonString(std::string_view s, std::string* out) {
  // Short plain strings (keys, dtype names: most of a dump's strings) in
  // one append, quotes included.
  char buf[64];
  if (s.size() + 2 <= sizeof buf) {
    bool plain = true;
    for (size_t k = 0; k < s.size(); ++k) {
      plain &= Plain(static_cast<unsigned char>(s[k]));
      buf[k + 1] = s[k];
    }
    if (plain) {
      buf[0] = buf[s.size() + 1] = '"';
      out->append(buf, s.size() + 2);
      return;
    }
  }
  *out += '"';
  size_t i = 0;
  while (i < s.size()) {
    size_t run = i;  // printable ASCII needing no escape: appended at once
    while (run + 8 <= s.size()) {
      uint64_t w;
      std::memcpy(&w, s.data() + run, 8);
      if (AnyNeedsEscape(w)) break;
      run += 8;
    }
    while (run < s.size() && Plain(static_cast<unsigned char>(s[run]))) ++run;
    out->append(s.data() + i, run - i);
    i = run;
    if (i < s.size()) AppendEscaped(DecodeUtf8(s, &i), out);
  }
  *out += '"';
}

void AppendPyJsonFloat(double d, std::string* out) {
  if (std::isnan(d)) {
    *out += "NaN";
  } else if (std::isinf(d)) {
    *out += d > 0 ? "Infinity" : "-Infinity";
  } else {
    char buf[kPyFloatReprMax];
    out->append(buf, static_cast<size_t>(PyFloatReprTo(d, buf)));
  }
}

void AppendLateFloat(double d, std::string* out) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  char buf[17];
  buf[0] = kLateFloatMark;
  for (int k = 15; k >= 1; k -= 2) {  // a byte, two digits, at a time
    unsigned byte = static_cast<unsigned>(bits & 0xff);
    buf[k] = "0123456789abcdef"[byte >> 4];
    buf[k + 1] = "0123456789abcdef"[byte & 15];
    bits >>= 8;
  }
  out->append(buf, sizeof buf);
}

void AppendExpandingLateFloats(std::string_view text, std::string* out) {
  while (true) {
    const void* at = std::memchr(text.data(), kLateFloatMark, text.size());
    if (at == nullptr) break;
    size_t n = static_cast<size_t>(static_cast<const char*>(at) - text.data());
    out->append(text.data(), n);
    text.remove_prefix(n + 1);
    uint64_t bits = 0;
    size_t k = 0;
    for (; k < 16 && k < text.size(); ++k) {
      char c = text[k];
      int v = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                     : -1;
      if (v < 0) break;
      bits = bits << 4 | static_cast<uint64_t>(v);
    }
    if (k < 16) {
      *out += "null";
    } else {
      double d;
      std::memcpy(&d, &bits, 8);
      AppendPyJsonFloat(d, out);
    }
    text.remove_prefix(k);
  }
  out->append(text.data(), text.size());
}

void AppendPyJson(const PyValue& v, int indent, int level, std::string* out) {
  LOCKSTEP_DCHECK(out != nullptr && level >= 0);
  switch (v.kind()) {
    case PyValue::Kind::kNone:
      *out += "null";
      return;
    case PyValue::Kind::kBool:
      *out += v.as_bool() ? "true" : "false";
      return;
    case PyValue::Kind::kInt:
      *out += v.PyStr();  // digits, BigInt included
      return;
    case PyValue::Kind::kFloat:
      AppendPyJsonFloat(v.as_double(), out);
      return;
    case PyValue::Kind::kStr:
      AppendPyJsonString(v.as_str(), out);
      return;
    case PyValue::Kind::kList:
      AppendList(v, indent, level, out);
      return;
    case PyValue::Kind::kDict:
      AppendDict(v, indent, level, out);
      return;
  }
}

std::string ToPyJson(const PyValue& v, int indent) {
  std::string out;
  AppendPyJson(v, indent, 0, &out);
  return out;
}

}  // namespace lockstep
