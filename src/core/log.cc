#include "lockstep/core/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <mutex>

namespace lockstep {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kInfo};
std::mutex g_mu;

void Emit(LogLevel level, FILE* out, const char* prefix, std::string_view msg) {
  if (level < g_level.load(std::memory_order_relaxed)) return;
  std::string safe = EscapeControl(msg);
  std::lock_guard<std::mutex> lock(g_mu);
  std::fprintf(out, "%s%.*s\n", prefix, static_cast<int>(safe.size()),
               safe.data());
  std::fflush(out);
}

}  // namespace

size_t IsDisplayControl(std::string_view s, unsigned* code_point) {
  if (s.size() < 3 || static_cast<unsigned char>(s[0]) != 0xe2) return 0;
  unsigned b1 = static_cast<unsigned char>(s[1]);
  unsigned b2 = static_cast<unsigned char>(s[2]);
  if ((b1 & 0xc0) != 0x80 || (b2 & 0xc0) != 0x80) return 0;
  unsigned cp = 0x2000 | ((b1 & 0x3f) << 6) | (b2 & 0x3f);
  bool control = cp == 0x200e || cp == 0x200f ||
                 (cp >= 0x2028 && cp <= 0x202e) ||
                 (cp >= 0x2066 && cp <= 0x2069);
  if (!control) return 0;
  *code_point = cp;
  return 3;
}

bool NeedsControlEscape(std::string_view text) {
  bool any = false;
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    any |= (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f ||
           c == 0xc2 || c == 0xe2;
  }
  return any;
}

std::string EscapeControl(std::string_view text, bool keep_line_breaks) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    unsigned cp = 0;
    bool line_break = c == '\t' || c == '\n' || c == '\r';
    if ((c < 0x20 && !(keep_line_breaks && line_break)) || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == 0xc2 && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xe0) == 0x80) {
      unsigned char d = static_cast<unsigned char>(text[++i]);
      out += "\\u00";
      out += kHex[d >> 4];
      out += kHex[d & 15];
    } else if (size_t n = IsDisplayControl(text.substr(i), &cp)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4)
        out += kHex[(cp >> shift) & 15];
      i += n - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void SetLogLevel(LogLevel level) { g_level.store(level); }
LogLevel GetLogLevel() { return g_level.load(); }

void LogVerbose(std::string_view msg) {
  Emit(LogLevel::kVerbose, stdout, "[V] ", msg);
}
void LogInfo(std::string_view msg) {
  Emit(LogLevel::kInfo, stdout, "[I] ", msg);
}
void LogWarning(std::string_view msg) {
  Emit(LogLevel::kWarning, stderr, "[W] ", msg);
}
void LogError(std::string_view msg) {
  Emit(LogLevel::kError, stderr, "[E] ", msg);
}

bool StderrIsTerminal() { return ::isatty(2) == 1; }

}  // namespace lockstep
