#include "curve/curve_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lockstep::curve_text {

std::string XmlEscape(std::string_view s) {
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
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string Num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

std::string NumUp(double x) {
  std::string s = Num(x);
  if (x <= 0 || std::strtod(s.c_str(), nullptr) >= x) return s;
  double unit = std::pow(10.0, std::floor(std::log10(x)) - 5);
  double v = std::ceil(x / unit) * unit;
  for (int i = 0; i < 4 && std::strtod((s = Num(v)).c_str(), nullptr) < x;
       ++i) {
    v += unit;
  }
  return s;
}

}  // namespace lockstep::curve_text
