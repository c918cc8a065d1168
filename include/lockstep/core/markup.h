// Escaping text for HTML and XML (SVG) markup.
// Thread safety: pure function.
#ifndef LOCKSTEP_CORE_MARKUP_H_
#define LOCKSTEP_CORE_MARKUP_H_

#include <string>
#include <string_view>

namespace lockstep {

// Escapes & < > " ' as entities, so the result is safe in element text and
// in quoted attribute values; control characters other than tab, newline
// and carriage return (not allowed in XML 1.0) become '?'; the characters
// that reorder text or break lines invisibly (U+202E, U+2028, ...;
// IsDisplayControl in log.h) become the text "\u202e". Other bytes >= 0x80
// pass through (callers that need valid UTF-8 sanitize first).
std::string EscapeMarkup(std::string_view s);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_MARKUP_H_
