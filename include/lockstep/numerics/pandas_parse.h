// pandas' float parser, reproduced: msprobe re-parses statistics with
// pd.to_numeric, which (pandas 1.x/2.x) uses the "precise_xstrtod" routine of
// pandas' C tokenizer. It keeps at most 17 significant digits (leading zeros
// of the integer part count), accumulates them in a double and scales by a
// table of powers of ten, so it is not correctly rounded:
// "0.15361405909061432" parses to 0.1536140590906143. lockstep uses it only
// to print msprobe-identical statistics-mode cells.
// Thread safety: pure function.
#ifndef LOCKSTEP_NUMERICS_PANDAS_PARSE_H_
#define LOCKSTEP_NUMERICS_PANDAS_PARSE_H_

#include <optional>
#include <string_view>

namespace lockstep {

// Parses `s` as pandas' precise_xstrtod does (decimal point '.', exponent
// 'e'/'E', no thousands separator, surrounding spaces allowed). Returns
// nullopt when `s` is not a whole number. "inf"/"nan" are not handled here.
std::optional<double> PandasParseFloat(std::string_view s);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_PANDAS_PARSE_H_
