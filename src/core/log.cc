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
  std::lock_guard<std::mutex> lock(g_mu);
  std::fprintf(out, "%s%.*s\n", prefix, static_cast<int>(msg.size()),
               msg.data());
  std::fflush(out);
}

}  // namespace

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
