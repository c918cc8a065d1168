// Internal to the curve layer: how numbers and text appear in its verdicts,
// errors, plots and pages. Thread safety: pure functions.
#ifndef LOCKSTEP_CURVE_CURVE_TEXT_H_
#define LOCKSTEP_CURVE_CURVE_TEXT_H_

#include <string>
#include <string_view>

namespace lockstep::curve_text {

// %.6g; "nan", "inf", "-inf" as such.
std::string Num(double x);

// The shortest %.6g text of a value >= x (x rounded up in its 6th
// significant digit where needed), for "--tol-abs N would pass" hints that
// must hold. REQUIRES: x finite and >= 0.
std::string NumUp(double x);

// Escapes & < > " ' for XML/HTML text and attribute values; control
// characters other than tab and newline (not allowed in XML 1.0) become '?'.
std::string XmlEscape(std::string_view s);

}  // namespace lockstep::curve_text

#endif  // LOCKSTEP_CURVE_CURVE_TEXT_H_
