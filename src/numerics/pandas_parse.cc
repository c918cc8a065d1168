#include "lockstep/numerics/pandas_parse.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <string>

namespace lockstep {
namespace {

constexpr int kMaxDigits = 17;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// 1e0 .. 1e308, each the correctly rounded double (as C literals are).
const std::array<double, 309>& PowersOfTen() {
  static const std::array<double, 309> table = [] {
    std::array<double, 309> t{};
    for (int i = 0; i <= 308; ++i)
      t[i] = std::strtod(("1e" + std::to_string(i)).c_str(), nullptr);
    return t;
  }();
  return table;
}

}  // namespace

std::optional<double> PandasParseFloat(std::string_view s) {
  size_t p = 0, n = s.size();
  while (p < n && s[p] == ' ') ++p;
  bool negative = false;
  if (p < n && (s[p] == '-' || s[p] == '+')) negative = s[p++] == '-';
  double number = 0;
  int exponent = 0, digits = 0, decimals = 0;
  for (; p < n && IsDigit(s[p]); ++p) {
    if (digits < kMaxDigits) {
      number = number * 10. + (s[p] - '0');
      ++digits;
    } else {
      ++exponent;
    }
  }
  if (p < n && s[p] == '.') {
    ++p;
    for (; p < n && digits < kMaxDigits && IsDigit(s[p]);
         ++p, ++digits, ++decimals) {
      number = number * 10. + (s[p] - '0');
    }
    while (p < n && IsDigit(s[p])) ++p;
    exponent -= decimals;
  }
  if (digits == 0) return std::nullopt;
  if (negative) number = -number;
  if (p < n && (s[p] == 'e' || s[p] == 'E')) {
    size_t save = p++;
    bool eneg = false;
    if (p < n && (s[p] == '-' || s[p] == '+')) eneg = s[p++] == '-';
    int e = 0, ed = 0;
    for (; p < n && ed < kMaxDigits && IsDigit(s[p]); ++p, ++ed)
      e = e * 10 + (s[p] - '0');
    if (ed == 0) {
      p = save;
    } else {
      exponent += eneg ? -e : e;
    }
  }
  while (p < n && s[p] == ' ') ++p;
  if (p != n) return std::nullopt;
  const auto& e = PowersOfTen();
  if (exponent > 308) return negative ? -HUGE_VAL : HUGE_VAL;
  if (exponent > 0) return number * e[static_cast<size_t>(exponent)];
  if (exponent < -308) {
    if (exponent < -616) return negative ? -0.0 : 0.0;
    number /= e[static_cast<size_t>(-308 - exponent)];
    return number / e[308];
  }
  return number / e[static_cast<size_t>(-exponent)];
}

}  // namespace lockstep
