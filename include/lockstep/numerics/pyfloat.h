// Python-compatible float formatting, so that lockstep's CSV cells are
// byte-identical to msprobe's (pandas writes floats with repr()).
// Thread safety: pure functions.
#ifndef LOCKSTEP_NUMERICS_PYFLOAT_H_
#define LOCKSTEP_NUMERICS_PYFLOAT_H_

#include <string>

namespace lockstep {

// Python's repr(float): shortest round-trip digits; fixed notation when the
// decimal exponent is in [-4, 16), else "1.5e-05"/"1e+16"; "nan", "inf",
// "-inf", "-0.0"; fixed notation always has a '.' ("1.0").
std::string PyFloatRepr(double x);

// The same characters written to `buf` (no allocation); returns how many.
// kPyFloatReprMax bytes always suffice.
inline constexpr int kPyFloatReprMax = 32;
int PyFloatReprTo(double x, char* buf);

// Python's float('{:.12f}'.format(x)): x rounded to 12 decimal places
// (correctly rounded, ties to even), as msprobe's format_value does.
// NaN and infinities pass through.
double RoundTo12Decimals(double x);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_PYFLOAT_H_
