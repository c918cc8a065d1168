// CSV writing in the dialect pandas' DataFrame.to_csv uses (msprobe's CSV):
// comma separated, '\n' line ends, a cell is quoted with '"' when it holds a
// comma, a quote, '\n' or '\r', and quotes inside are doubled.
// Thread safety: pure functions.
#ifndef LOCKSTEP_REPORT_CSV_H_
#define LOCKSTEP_REPORT_CSV_H_

#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

// Appends one CSV line (with '\n') to `out`.
void AppendCsvLine(const std::vector<std::string>& cells, std::string* out);
// One cell, quoted as CsvQuote does, appended to *out (no comma, no line end).
void AppendCsvCell(std::string_view cell, std::string* out);

// A cell that a spreadsheet would run as a formula (it starts with '=',
// '+', '-', '@', a tab or a carriage return: OWASP's list) prefixed with a
// single quote, so it shows as text. Numbers ("-1.5", "-inf", "-12.5%")
// stay as they are; cells that start otherwise are returned unchanged.
std::string CsvNeutralise(std::string_view cell);
bool CsvIsFormulaLike(std::string_view cell);  // CsvNeutralise would change it

// Quotes a cell if needed.
std::string CsvQuote(std::string_view cell);

// Parses CSV text (RFC 4180 with pandas quoting) into rows of cells. Used by
// tests and by `lockstep` to read msprobe results.
std::vector<std::vector<std::string>> ParseCsv(std::string_view text);

}  // namespace lockstep

#endif  // LOCKSTEP_REPORT_CSV_H_
