// CSV/TSV logs with a header row (pandas, wandb and Lightning CSVLogger
// exports). RFC 4180 quoting: a quoted field may hold the delimiter, a
// doubled quote and newlines.
#include <algorithm>
#include <string>
#include <vector>

#include "curve/log_builder.h"
#include "lockstep/curve/readers.h"

namespace lockstep::curve_internal {
namespace {

// Splits the record starting at `*pos` into `fields` and moves `*pos` past
// it. Returns false when a quoted field is never closed.
bool NextRecord(std::string_view text, char delim, size_t* pos,
                std::vector<std::string>* fields) {
  fields->clear();
  std::string cur;
  size_t i = *pos;
  bool quoted = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c != '"') {
        cur += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        cur += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delim) {
      fields->push_back(std::move(cur));
      cur.clear();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      cur += c;
    }
  }
  fields->push_back(std::move(cur));
  *pos = i < text.size() ? i + 1 : text.size();
  return !quoted;
}

// The delimiter of a header line: the most frequent of tab, comma and
// semicolon outside quotes (comma when none occurs).
char SniffDelimiter(std::string_view text) {
  size_t counts[3] = {0, 0, 0};
  static constexpr char kDelims[3] = {',', '\t', ';'};
  bool quoted = false;
  for (char c : text.substr(0, text.find('\n'))) {
    if (c == '"') quoted = !quoted;
    for (int d = 0; d < 3 && !quoted; ++d) counts[d] += c == kDelims[d];
  }
  int best = 0;
  for (int d = 1; d < 3; ++d) {
    if (counts[d] > counts[best]) best = d;
  }
  return kDelims[best];
}

// The step column of `header`: best-ranked step name, else column 0.
size_t StepColumn(const std::vector<std::string>& header) {
  size_t col = 0;
  int best = 99;
  for (size_t i = 0; i < header.size(); ++i) {
    int rank = StepKeyRank(header[i]);
    if (rank >= 0 && rank < best) {
      best = rank;
      col = i;
    }
  }
  return col;
}

struct Table {
  std::vector<CurveSeries*> series;  // by column; null for the step column
  size_t step_col = 0;
};

Table MakeTable(const std::vector<std::string>& header, CurveLog* log) {
  Table t;
  t.step_col = StepColumn(header);
  for (size_t i = 0; i < header.size(); ++i) {
    std::string name = CanonicalMetricName(header[i]);
    if (name.empty()) name = "column" + std::to_string(i + 1);
    t.series.push_back(i == t.step_col ? nullptr : Series(log, name));
  }
  return t;
}

// Adds one row; false when it is malformed (bad step, too many cells).
bool AddRow(const Table& t, const std::vector<std::string>& row,
            CurveLog* log) {
  int64_t step;
  if (row.size() > t.series.size() || t.step_col >= row.size() ||
      !ParseStep(row[t.step_col], &step)) {
    return false;
  }
  for (size_t i = 0; i < row.size(); ++i) {
    double v;
    if (t.series[i] != nullptr && ParseDouble(row[i], &v)) {
      AddPoint(t.series[i], step, v);
    }
  }
  return true;
}

void DropEmptySeries(CurveLog* log) {
  for (auto it = log->metrics.begin(); it != log->metrics.end();) {
    it = it->second.points.empty() ? log->metrics.erase(it) : std::next(it);
  }
}

}  // namespace

StatusOr<CurveLog> ParseCsv(std::string_view text, std::string_view subject,
                            char delimiter) {
  CurveLog log;
  log.format = CurveFormat::kCsv;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // BOM
  char delim = delimiter != 0 ? delimiter : SniffDelimiter(text);
  size_t pos = 0;
  std::vector<std::string> fields;
  if (Trim(text).empty() || !NextRecord(text, delim, &pos, &fields)) {
    return Status::Corruption(subject, "line 1: no header row");
  }
  Table table = MakeTable(fields, &log);
  int64_t line = 1 + std::count(text.begin(), text.begin() + pos, '\n');
  while (pos < text.size()) {
    ++log.lines;
    size_t start = pos;
    bool closed = NextRecord(text, delim, &pos, &fields);
    int64_t row_line = line;
    line += std::count(text.begin() + start, text.begin() + pos, '\n');
    if (fields.size() == 1 && Trim(fields[0]).empty()) continue;  // blank
    if (closed && AddRow(table, fields, &log)) continue;
    if (log.malformed++ < 5) {
      log.warnings.push_back(
          StrCat("line ", std::to_string(row_line), ": ",
                 closed ? "bad step or too many cells" : "unclosed quote"));
    }
  }
  DropEmptySeries(&log);
  LOCKSTEP_RETURN_IF_ERROR(CheckNotEmpty(log, subject));
  return log;
}

}  // namespace lockstep::curve_internal
