#include "lockstep/report/xlsx_report.h"

#ifdef LOCKSTEP_HAVE_XLSX
#include <unistd.h>
#include <xlsxwriter.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

#include "lockstep/core/env.h"
#include "lockstep/core/file.h"
#endif

namespace lockstep {

#ifndef LOCKSTEP_HAVE_XLSX

bool XlsxReportSupported() { return false; }

Status WriteXlsxReport(const CompareResult&, const std::string& path,
                       const XlsxOptions&) {
  return Status::NotSupported(
      path,
      "lockstep was built without libxlsxwriter. Note: install "
      "libxlsxwriter-dev and rebuild, or write the CSV instead");
}

#else  // LOCKSTEP_HAVE_XLSX

namespace {

// Cells made of digits that are not quantities: names and checksums.
bool IsTextColumn(std::string_view name) {
  return name.find("Name") != std::string_view::npos ||
         name.find("name") != std::string_view::npos ||
         name.find("MD5") != std::string_view::npos;
}

// True when all of `s` is a finite decimal number ("1.0", "-3e-05"); not for
// " inf", "nan", "12.5%", "0x10" or "".
bool ParseNumber(std::string_view s, double* out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] =
      std::from_chars(s.data(), end, *out, std::chars_format::general);
  return ec == std::errc() && ptr == end && std::isfinite(*out);
}

std::string ClipCell(std::string_view s) {
  if (s.size() <= kXlsxMaxCellBytes) return std::string(s);
  size_t n = kXlsxMaxCellBytes - 3;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80)
    --n;  // continuation byte
  return std::string(s.substr(0, n)) + "...";
}

struct Styles {
  lxw_format* header = nullptr;
  lxw_format* error = nullptr;
  lxw_format* warning = nullptr;
};

Styles AddStyles(lxw_workbook* wb) {
  Styles st;
  st.header = workbook_add_format(wb);
  format_set_bold(st.header);
  st.error = workbook_add_format(wb);
  format_set_pattern(st.error, LXW_PATTERN_SOLID);
  format_set_bg_color(st.error, 0xFF0000);
  st.warning = workbook_add_format(wb);
  format_set_pattern(st.warning, LXW_PATTERN_SOLID);
  format_set_bg_color(st.warning, 0xFFFF00);
  return st;
}

lxw_format* RowStyle(const Styles& st, Verdict v) {
  if (v == Verdict::kError) return st.error;
  return v == Verdict::kWarning ? st.warning : nullptr;
}

// Writes a sheet's header row, widths, frozen pane and autofilter.
lxw_error StartSheet(lxw_worksheet* ws, const CompareResult& r,
                     const Styles& st, size_t rows, size_t width) {
  if (width == 0) return LXW_NO_ERROR;
  lxw_col_t last = static_cast<lxw_col_t>(width - 1);
  lxw_error err = worksheet_set_column(ws, 0, last, 14, nullptr);
  if (err == LXW_NO_ERROR)
    err =
        worksheet_set_column(ws, 0, std::min<lxw_col_t>(1, last), 48, nullptr);
  for (size_t c = 0; err == LXW_NO_ERROR && c < r.columns.size(); ++c) {
    err = worksheet_write_string(ws, 0, static_cast<lxw_col_t>(c),
                                 ClipCell(r.columns[c]).c_str(), st.header);
  }
  worksheet_freeze_panes(ws, 1, 0);
  if (err == LXW_NO_ERROR)
    err = worksheet_autofilter(ws, 0, 0, static_cast<lxw_row_t>(rows), last);
  return err;
}

lxw_error WriteRow(lxw_worksheet* ws, lxw_row_t at, const CompareRow& row,
                   const std::vector<bool>& text_column, size_t width,
                   lxw_format* fill) {
  lxw_error err = LXW_NO_ERROR;
  for (size_t c = 0;
       err == LXW_NO_ERROR && c < std::max(width, row.cells.size()); ++c) {
    lxw_col_t col = static_cast<lxw_col_t>(c);
    std::string_view cell = c < row.cells.size() ? row.cells[c] : "";
    double x;
    if (cell.empty()) {
      if (fill) err = worksheet_write_blank(ws, at, col, fill);
    } else if (!(c < text_column.size() && text_column[c]) &&
               ParseNumber(cell, &x)) {
      err = worksheet_write_number(ws, at, col, x, fill);
    } else {
      err = worksheet_write_string(ws, at, col, ClipCell(cell).c_str(), fill);
    }
  }
  return err;
}

lxw_error WriteSheets(lxw_workbook* wb, const CompareResult& r,
                      size_t per_sheet) {
  Styles st = AddStyles(wb);
  std::vector<bool> text_column;
  for (const std::string& c : r.columns) text_column.push_back(IsTextColumn(c));
  size_t width = r.columns.size();
  size_t sheets =
      std::max<size_t>(1, (r.rows.size() + per_sheet - 1) / per_sheet);
  for (size_t s = 0; s < sheets; ++s) {
    std::string name = "Sheet" + std::to_string(s + 1);
    lxw_worksheet* ws = workbook_add_worksheet(wb, name.c_str());
    if (ws == nullptr) return LXW_ERROR_MEMORY_MALLOC_FAILED;
    size_t begin = s * per_sheet,
           end = std::min(r.rows.size(), begin + per_sheet);
    lxw_error err = StartSheet(ws, r, st, end - begin, width);
    for (size_t i = begin; err == LXW_NO_ERROR && i < end; ++i) {
      const CompareRow& row = r.rows[i];
      err = WriteRow(ws, static_cast<lxw_row_t>(i - begin + 1), row,
                     text_column, width, RowStyle(st, row.verdict));
    }
    if (err != LXW_NO_ERROR) return err;
  }
  return LXW_NO_ERROR;
}

}  // namespace

bool XlsxReportSupported() { return true; }

Status WriteXlsxReport(const CompareResult& result, const std::string& path,
                       const XlsxOptions& options) {
  if (options.rows_per_sheet == 0 ||
      options.rows_per_sheet > kXlsxRowsPerSheet) {
    return Status::InvalidArgument("rows_per_sheet",
                                   "must be in [1, 1048500], got " +
                                       std::to_string(options.rows_per_sheet));
  }
  // libxlsxwriter opens the file by name: give it one in a directory only
  // we can write (a link planted beside `path` is never followed).
  LOCKSTEP_ASSIGN_OR_RETURN(std::string tmpdir, MakePrivateTempDir(path));
  std::string tmp = tmpdir + "/book.xlsx";
  auto cleanup = [&] {
    std::remove(tmp.c_str());
    ::rmdir(tmpdir.c_str());
  };
  lxw_workbook_options wopts = {};
  wopts.constant_memory =
      LXW_TRUE;  // rows go straight to disk: memory stays flat
  // Zip64 only when a sheet may pass 4 GiB; some readers dislike it otherwise.
  wopts.use_zip64 = result.rows.size() * result.columns.size() > 20'000'000
                        ? LXW_TRUE
                        : LXW_FALSE;
  wopts.tmpdir = tmpdir.data();  // its own spill files go there too
  lxw_workbook* wb = workbook_new_opt(tmp.c_str(), &wopts);
  if (wb == nullptr) {
    cleanup();
    return Status::IoError(path, "cannot create workbook");
  }
  lxw_error err = WriteSheets(wb, result, options.rows_per_sheet);
  lxw_error close_err = workbook_close(wb);  // also frees wb
  if (err == LXW_NO_ERROR) err = close_err;
  if (err != LXW_NO_ERROR) {
    cleanup();
    return Status::IoError(
        path, std::string("cannot write workbook: ") + lxw_strerror(err));
  }
  if (Env::Current()->Rename(tmp, path) != 0) {
    Status status = Status::IoError(
        path, std::string("rename failed: ") + std::strerror(errno));
    cleanup();
    return status;
  }
  cleanup();
  return Status::Ok();
}

#endif  // LOCKSTEP_HAVE_XLSX

}  // namespace lockstep
