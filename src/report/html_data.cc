// The data embedded in the HTML report and its table file (schemas in
// html_internal.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

#include "html_internal.h"
#include "json_util.h"
#include "lockstep/format/crc32.h"

namespace lockstep::internal {

int Severity(Verdict v) {
  static constexpr int kSeverity[] = {0, 2, 3, 1};
  return kSeverity[static_cast<int>(v)];
}

// Metrics only feed the plot and the tooltip, so 7 significant digits keep
// the blob small; the table shows the exact cells.
void WritePlotNumber(JsonWriter* w, double x) {
  if (std::isnan(x)) {
    w->Null();
  } else if (std::isinf(x)) {
    w->String(x > 0 ? "inf" : "-inf");
  } else {
    char buf[32];
    int n = std::snprintf(buf, sizeof(buf), "%.7g", x);
    w->RawValue(buf, static_cast<size_t>(n), rapidjson::kNumberType);
  }
}

namespace {

// The script indexes ["pass", "warning", "error", "unmatched"] by these.
static_assert(static_cast<int>(Verdict::kPass) == 0 &&
              static_cast<int>(Verdict::kWarning) == 1 &&
              static_cast<int>(Verdict::kError) == 2 &&
              static_cast<int>(Verdict::kUnmatched) == 3);

// With a table file, the page embeds the rows this close to the first
// divergence and at most this many rows in all (the first non-pass ones).
constexpr size_t kContextRows = 20;
constexpr size_t kMaxEmbeddedRows = 10000;
// With a table file, the plot keeps the extreme rows of this many slices of
// the row range (more than a plot has pixel columns).
constexpr size_t kPlotSlices = 2048;

using MetricField = double CompareRow::*;
struct Metric {
  const char* key;
  MetricField field;
  bool low;  // the lowest value is the worst (cosine)
};
constexpr Metric kMetrics[] = {
    {"cosine", &CompareRow::cosine, true},
    {"one_minus_cos", &CompareRow::one_minus_cos, false},
    {"max_abs_err", &CompareRow::max_abs_err, false},
    {"max_rel_err", &CompareRow::max_rel_err, false}};

// Calls f(i) for each row index of `rows` (nullptr: every row).
template <typename F>
void ForRows(const CompareResult& r, const std::vector<size_t>* rows, F f) {
  if (rows) {
    for (size_t i : *rows) f(i);
  } else {
    for (size_t i = 0; i < r.rows.size(); ++i) f(i);
  }
}

// The rows the page embeds beside a table file: those around the first
// divergence, and the first non-pass rows, up to kMaxEmbeddedRows in all.
std::vector<size_t> EmbeddedRows(const CompareResult& r) {
  std::vector<size_t> out;
  const FirstDivergence& fd = r.first_divergence;
  if (fd.found && fd.row_index < r.rows.size()) {
    size_t hi = std::min(r.rows.size(), fd.row_index + kContextRows + 1);
    for (size_t i = fd.row_index - std::min(fd.row_index, kContextRows); i < hi;
         ++i)
      out.push_back(i);
  }
  size_t context = out.size();
  for (size_t i = 0; i < r.rows.size() && out.size() < kMaxEmbeddedRows; ++i) {
    bool in_context = context > 0 && i >= out[0] && i <= out[context - 1];
    if (r.rows[i].verdict != Verdict::kPass && !in_context) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whether row a's metric value is worse than row b's (NaN never is).
bool Worse(const CompareResult& r, const Metric& m, size_t a, size_t b) {
  double x = r.rows[a].*m.field, y = r.rows[b].*m.field;
  if (std::isnan(x)) return false;
  if (std::isnan(y)) return true;
  return m.low ? x < y : x > y;
}

// The plotted rows beside a table file: per slice, each metric's worst row
// and the row of the most severe verdict.
std::vector<size_t> PlotRows(const CompareResult& r) {
  size_t n = r.rows.size(), slices = std::min(n, kPlotSlices);
  std::vector<size_t> out;
  for (size_t s = 0; s < slices; ++s) {
    size_t begin = s * n / slices, end = (s + 1) * n / slices;
    size_t severe = begin;
    for (size_t i = begin; i < end; ++i) {
      if (Severity(r.rows[i].verdict) > Severity(r.rows[severe].verdict))
        severe = i;
    }
    out.push_back(severe);
    for (const Metric& m : kMetrics) {
      size_t worst = begin;
      for (size_t i = begin; i < end; ++i) {
        if (Worse(r, m, i, worst)) worst = i;
      }
      out.push_back(worst);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void WritePlot(const CompareResult& r, const std::vector<size_t>* rows,
               JsonWriter* w) {
  w->StartObject();
  if (rows) {
    w->Key("index");
    w->StartArray();
    for (size_t i : *rows) w->Uint64(i);
    w->EndArray();
    w->Key("verdict");
    w->StartArray();
    for (size_t i : *rows) w->Int(static_cast<int>(r.rows[i].verdict));
    w->EndArray();
  }
  w->Key("metrics");
  w->StartObject();
  for (const Metric& m : kMetrics) {
    w->Key(m.key);
    w->StartArray();
    ForRows(r, rows, [&](size_t i) { WritePlotNumber(w, r.rows[i].*m.field); });
    w->EndArray();
  }
  w->EndObject();
  w->EndObject();
}

void WriteTableFileRef(const CompareResult& r, const TableFileRef* file,
                       JsonWriter* w) {
  if (!file) {
    w->Null();
    return;
  }
  w->StartObject();
  w->Key("name");
  JsonString(w, file->name);
  w->Key("id");
  JsonString(w, file->id);
  w->Key("rows");
  w->Uint64(r.rows.size());
  w->EndObject();
}

// `text` as the body of a single-quoted JavaScript string.
std::string JsStringBody(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 32);
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string RenderReportData(const CompareResult& r, const TableFileRef* file) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("summary");
  WriteSummaryObject(r, &w);
  w.Key("columns");
  w.StartArray();
  for (const std::string& c : r.columns) JsonString(&w, c);
  w.EndArray();
  w.Key("row_count");
  w.Uint64(r.rows.size());
  w.Key("first_divergence_row");
  const FirstDivergence& fd = r.first_divergence;
  if (fd.found && fd.row_index < r.rows.size()) {
    w.Uint64(fd.row_index);
  } else {
    w.Null();
  }
  // Its rank: the table shows the rows of that rank before it as walked
  // past (their errors explained by their inputs), not as errors.
  w.Key("first_divergence_rank");
  if (fd.found && fd.row_index < r.rows.size()) {
    w.Int64(r.rows[fd.row_index].rank);
  } else {
    w.Null();
  }
  std::vector<size_t> embedded, plotted;
  if (file) {
    embedded = EmbeddedRows(r);
    plotted = PlotRows(r);
  }
  w.Key("table");
  WriteTable(r, file ? &embedded : nullptr, &w);
  w.Key("table_file");
  WriteTableFileRef(r, file, &w);
  w.Key("plot");
  WritePlot(r, file ? &plotted : nullptr, &w);
  w.Key("steps");
  WriteStepMarks(r, &w);
  w.Key("modules");
  WriteModules(r, &w);
  w.EndObject();
  return ScriptSafeJson(std::string_view(buffer.GetString(), buffer.GetSize()));
}

std::string RenderTableFile(const CompareResult& r, std::string* id) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  WriteTable(r, nullptr, &w);
  std::string_view table(buffer.GetString(), buffer.GetSize());
  char crc[16];
  std::snprintf(crc, sizeof(crc), "%08x", Crc32(table));
  *id = std::to_string(r.rows.size()) + "-" + crc;
  std::string out =
      "window.lockstepTable = {id: \"" + *id + "\", table: JSON.parse('";
  out += JsStringBody(table);
  out += "')};\n";
  return out;
}

}  // namespace lockstep::internal
