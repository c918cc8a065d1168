#include "lockstep/numerics/pyfloat.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace lockstep {

int PyFloatReprTo(double x, char* buf) {
  char* out = buf;
  auto put = [&out](std::string_view s) {
    for (char c : s) *out++ = c;
  };
  if (std::isnan(x)) {
    put("nan");
    return static_cast<int>(out - buf);
  }
  if (std::signbit(x)) {
    *out++ = '-';
    x = -x;
  }
  if (std::isinf(x)) {
    put("inf");
    return static_cast<int>(out - buf);
  }
  if (x == 0) {
    put("0.0");
    return static_cast<int>(out - buf);
  }
  // Shortest round-trip digits d.ddde[+-]xx: at most 17 digits.
  char sci[40];
  auto res =
      std::to_chars(sci, sci + sizeof(sci), x, std::chars_format::scientific);
  char digits[20];
  int n = 0;
  const char* p = sci;
  for (; p < res.ptr && *p != 'e'; ++p) {
    if (*p != '.') digits[n++] = *p;
  }
  int exp10 = 0;
  std::from_chars(p + 1 + (p[1] == '+'), res.ptr, exp10);
  int decpt = exp10 + 1;  // value = 0.digits * 10^decpt
  if (decpt <= -4 || decpt > 16) {
    *out++ = digits[0];
    if (n > 1) {
      *out++ = '.';
      put(std::string_view(digits + 1, static_cast<size_t>(n - 1)));
    }
    *out++ = 'e';
    *out++ = exp10 < 0 ? '-' : '+';
    int e = std::abs(exp10);
    if (e >= 100) *out++ = static_cast<char>('0' + e / 100);
    *out++ = static_cast<char>('0' + e / 10 % 10);
    *out++ = static_cast<char>('0' + e % 10);
  } else if (decpt <= 0) {
    put("0.");
    for (int k = 0; k < -decpt; ++k) *out++ = '0';
    put(std::string_view(digits, static_cast<size_t>(n)));
  } else if (decpt < n) {
    put(std::string_view(digits, static_cast<size_t>(decpt)));
    *out++ = '.';
    put(std::string_view(digits + decpt, static_cast<size_t>(n - decpt)));
  } else {
    put(std::string_view(digits, static_cast<size_t>(n)));
    for (int k = n; k < decpt; ++k) *out++ = '0';
    put(".0");
  }
  return static_cast<int>(out - buf);
}

std::string PyFloatRepr(double x) {
  char buf[kPyFloatReprMax];
  return std::string(buf, static_cast<size_t>(PyFloatReprTo(x, buf)));
}

double RoundTo12Decimals(double x) {
  if (!std::isfinite(x)) return x;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%.12f", x);
  return std::strtod(buf, nullptr);
}

}  // namespace lockstep
