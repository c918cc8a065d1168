// The comparison as an Excel workbook, like msprobe's `--xlsx` output: the
// CSV's columns and cells, with cells that parse fully as a finite decimal
// number written as numbers (except in name and MD5 columns, whose digits are
// text), a bold, frozen header row with an autofilter, and the rows whose
// lockstep verdict is error / warning filled red FFFF0000 / yellow FFFF00
// (msprobe 8.3.3's highlight colours; unlike msprobe, highlighting stays on
// for workbooks of more than one sheet). Rows are split into sheets "Sheet1",
// "Sheet2", ... of at most kXlsxRowsPerSheet data rows each (msprobe's
// limit; Excel's is 1,048,576 rows including the header).
//
// Needs libxlsxwriter at build time; without it WriteXlsxReport returns
// NotSupported. Thread safety: pure functions (each call writes its own file).
#ifndef LOCKSTEP_REPORT_XLSX_REPORT_H_
#define LOCKSTEP_REPORT_XLSX_REPORT_H_

#include <cstddef>
#include <string>

#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"

namespace lockstep {

inline constexpr size_t kXlsxRowsPerSheet = 1048500;

// libxlsxwriter's (and Excel's) limit on one cell; a longer cell is cut at a
// UTF-8 character boundary so that it ends with "..." within the limit.
inline constexpr size_t kXlsxMaxCellBytes = 32767;

struct XlsxOptions {
  // Data rows per sheet. REQUIRES: 1 <= rows_per_sheet <= kXlsxRowsPerSheet.
  size_t rows_per_sheet = kXlsxRowsPerSheet;
};

// True when lockstep was built with libxlsxwriter.
bool XlsxReportSupported();

// Writes the workbook to `path` atomically (a temporary beside it, then
// rename); the header is result.columns. A workbook with no rows has one
// sheet with just the header.
// Errors: NotSupported without libxlsxwriter; InvalidArgument for a bad
// rows_per_sheet; NotFound when the directory does not exist and IoError when
// the file cannot be written otherwise (both name the path).
Status WriteXlsxReport(const CompareResult& result, const std::string& path,
                       const XlsxOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_REPORT_XLSX_REPORT_H_
