#include "curve/curve_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lockstep/core/markup.h"

namespace lockstep::curve_text {

std::string XmlEscape(std::string_view s) { return EscapeMarkup(s); }

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
