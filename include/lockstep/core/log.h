// Terminal messages with Polygraphy-style prefixes: "[I] ", "[W] ", "[E] ".
// Info goes to stdout, warnings and errors to stderr.
// Thread safety: each call writes one whole line under a lock.
#ifndef LOCKSTEP_CORE_LOG_H_
#define LOCKSTEP_CORE_LOG_H_

#include <string_view>

namespace lockstep {

enum class LogLevel { kVerbose = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Messages below `level` are dropped. Default kInfo.
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();

void LogVerbose(std::string_view msg);
void LogInfo(std::string_view msg);
void LogWarning(std::string_view msg);
void LogError(std::string_view msg);

// True if stderr is a terminal (progress output is shown only then).
bool StderrIsTerminal();

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_LOG_H_
