#include "lockstep/core/markup.h"

namespace lockstep {

std::string EscapeMarkup(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
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
