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

std::string EscapeControl(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == 0xc2 && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xe0) == 0x80) {
      unsigned char d = static_cast<unsigned char>(text[++i]);
      out += "\\u00";
      out += kHex[d >> 4];
      out += kHex[d & 15];
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
