// A CompareResult rebuilt from an msprobe compare CSV (fixtures under
// tests/fixtures/msprobe): verdicts from the Result column (unmatched where
// Bench Name is N/A), metrics from the Cosine / MaxAbsErr / MaxRelativeErr
// cells, and the first error output row as the first divergence. Enough to
// render real-world reports in tests; not lockstep's own comparison.
#ifndef LOCKSTEP_TESTS_REPORT_MSPROBE_CSV_RESULT_H_
#define LOCKSTEP_TESTS_REPORT_MSPROBE_CSV_RESULT_H_

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "lockstep/report/csv.h"
#include "report/synthetic_result.h"

namespace lockstep::testing {

// The cell's value ("12.5%" → 0.125), or NaN.
inline double CellValue(const std::string& cell) {
  char* end = nullptr;
  double x = std::strtod(cell.c_str(), &end);
  if (end == cell.c_str()) return NAN;
  if (*end == '%') return x / 100;
  return *end == '\0' ? x : NAN;
}

inline int ColumnOf(const std::vector<std::string>& header,
                    const std::string& name) {
  auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

inline CompareRow RowFromCells(const std::vector<std::string>& header,
                               std::vector<std::string> cells) {
  auto cell = [&](const char* name) {
    int c = ColumnOf(header, name);
    return c >= 0 && c < static_cast<int>(cells.size()) ? cells[c]
                                                        : std::string();
  };
  CompareRow row;
  std::string npu_name = cell("NPU Name");
  row.is_output = npu_name.find(".output.") != std::string::npos;
  size_t cut = npu_name.find(row.is_output ? ".output." : ".input.");
  row.entry = npu_name.substr(0, cut);
  std::string result = cell("Result");
  row.verdict = cell("Bench Name") == "N/A" ? Verdict::kUnmatched
                : result == "error"         ? Verdict::kError
                : result == "warning"       ? Verdict::kWarning
                                            : Verdict::kPass;
  std::string message = cell("Err_message");
  if (!message.empty() && message != "[]") row.messages = {message};
  row.cosine = CellValue(cell("Cosine"));
  row.one_minus_cos = 1 - row.cosine;
  row.max_abs_err = CellValue(cell("MaxAbsErr"));
  row.max_rel_err = CellValue(cell("MaxRelativeErr"));
  row.cells = PackedCells(cells);
  return row;
}

inline CompareResult ResultFromMsprobeCsv(const std::string& text,
                                          CompareMode mode) {
  std::vector<std::vector<std::string>> table = ParseCsv(text);
  CompareResult r;
  r.mode = mode;
  if (table.empty()) return r;
  r.columns = table[0];
  for (size_t i = 1; i < table.size(); ++i)
    r.rows.push_back(RowFromCells(r.columns, table[i]));
  Tally(&r);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const CompareRow& row = r.rows[i];
    if (row.verdict != Verdict::kError || !row.is_output) continue;
    r.first_divergence = {true,
                          0,
                          -1,
                          row.entry,
                          std::string(row.npu_name()),
                          DivergenceReason::kPrecision,
                          row.messages.empty() ? "" : row.messages[0],
                          i};
    break;
  }
  return r;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_REPORT_MSPROBE_CSV_RESULT_H_
