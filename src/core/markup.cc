#include "lockstep/core/markup.h"

#include "lockstep/core/log.h"

namespace lockstep {

std::string EscapeMarkup(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    unsigned cp = 0;
    if (size_t n = IsDisplayControl(s.substr(i), &cp)) {
      // Shown, not obeyed: "\u202e" as text.
      out += EscapeControl(s.substr(i, n));
      i += n - 1;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default: {
        unsigned char u = static_cast<unsigned char>(c);
        bool control = u < 0x20 && c != '\t' && c != '\n' && c != '\r';
        out += control ? '?' : c;
      }
    }
  }
  return out;
}

}  // namespace lockstep
