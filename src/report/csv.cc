#include "lockstep/report/csv.h"

#include <cstdlib>

#include "lockstep/core/log.h"

namespace lockstep {

namespace {

// [+-]digits[.digits][e[+-]digits] with a digit before or after the point:
// text strtod reads whole, told without calling it.
bool PlainDecimal(std::string_view s) {
  size_t i = 0, n = s.size();
  auto digits = [&] {
    size_t from = i;
    while (i < n && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
  size_t mantissa = digits();
  if (i < n && s[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == n;
}

// A whole number as strtod reads it, optionally followed by one '%'.
bool IsNumber(std::string_view cell) {
  if (!cell.empty() && cell.back() == '%') cell.remove_suffix(1);
  if (PlainDecimal(cell)) return true;  // most numbers: no strtod
  if (cell.empty() || cell.size() > 64) return false;
  char s[65];  // NUL-terminated for strtod, without a heap string
  cell.copy(s, cell.size());
  s[cell.size()] = '\0';
  char* end = nullptr;
  std::strtod(s, &end);
  return end == s + cell.size();
}

// True when the cell holds a character that makes it quoted: , " \n \r.
// (find_first_of calls memchr over the set for every character: most of a
// large CSV's writing time.)
bool NeedsQuotes(std::string_view cell) {
  bool any = false;
  for (char c : cell) any |= c == ',' || c == '"' || c == '\n' || c == '\r';
  return any;
}

}  // namespace

bool CsvIsFormulaLike(std::string_view cell) {
  if (cell.empty() ||
      std::string_view("=+-@\t\r").find(cell[0]) == std::string_view::npos)
    return false;
  return !IsNumber(cell);
}

std::string CsvNeutralise(std::string_view cell) {
  return CsvIsFormulaLike(cell) ? "'" + std::string(cell) : std::string(cell);
}

std::string CsvQuote(std::string_view cell) {
  std::string out;
  AppendCsvCell(cell, &out);
  return out;
}

void AppendCsvCell(std::string_view cell, std::string* out) {
  // Raw ESC and BEL bytes from a dump would reach the terminal of whoever
  // reads the CSV with cat; U+202E would reverse what follows it.
  if (NeedsControlEscape(cell)) {
    std::string safe = EscapeControl(cell, /*keep_line_breaks=*/true);
    if (safe != cell) return AppendCsvCell(safe, out);
  }
  if (!NeedsQuotes(cell)) {
    out->append(cell);
    return;
  }
  out->push_back('"');
  for (char c : cell) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendCsvLine(const std::vector<std::string>& cells, std::string* out) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out->push_back(',');
    AppendCsvCell(cells[i], out);
  }
  out->push_back('\n');
}

std::vector<std::vector<std::string>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false;
  bool any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          cell += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cell += c;
      }
      continue;
    }
    any = true;
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(std::move(cell));
      cell.clear();
      rows.push_back(std::move(row));
      row.clear();
      any = false;
    } else {
      cell += c;
    }
  }
  if (any || !cell.empty() || !row.empty()) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lockstep
