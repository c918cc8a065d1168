// Terminal messages with Polygraphy-style prefixes: "[I] ", "[W] ", "[E] ".
// Info goes to stdout, warnings and errors to stderr.
// Every message is printed through EscapeControl: names and values read from
// a user's files can't move the cursor, clear the screen or start a line.
// Thread safety: each call writes one whole line under a lock.
#ifndef LOCKSTEP_CORE_LOG_H_
#define LOCKSTEP_CORE_LOG_H_

#include <string>
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

// `text` with terminal control characters made visible: C0 controls
// (0x00-0x1f, newline and tab included unless `keep_line_breaks`, which
// keeps tab, newline and carriage return) and DEL as "\xNN", C1 controls
// (U+0080-U+009F, UTF-8 0xc2 0x80-0x9f) as "\u00NN", and the characters
// that reorder or break the text around them (IsDisplayControl) as
// "\uNNNN": a name holding U+202E (right-to-left override) cannot make a
// line read backwards. Other bytes, UTF-8 included, pass unchanged.
std::string EscapeControl(std::string_view text, bool keep_line_breaks = false);

// The length (3) of the UTF-8 sequence at the start of `s` when it is one
// of the invisible characters that change how text around it is shown:
// U+200E/U+200F (left-to-right, right-to-left mark), U+2028/U+2029 (line,
// paragraph separator), U+202A-U+202E (embeddings and overrides) and
// U+2066-U+2069 (isolates); else 0. *code_point gets its value.
size_t IsDisplayControl(std::string_view s, unsigned* code_point);

// True when `text` holds a byte that EscapeControl(text, true) changes (a
// fast check for writers of large files).
bool NeedsControlEscape(std::string_view text);

// True if stderr is a terminal (progress output is shown only then).
bool StderrIsTerminal();

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_LOG_H_
