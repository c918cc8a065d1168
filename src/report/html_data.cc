// The data embedded in the HTML report (schema in html_internal.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "html_internal.h"
#include "json_util.h"

namespace lockstep::internal {
namespace {

// The script indexes ["pass", "warning", "error", "unmatched"] by these.
static_assert(static_cast<int>(Verdict::kPass) == 0 &&
              static_cast<int>(Verdict::kWarning) == 1 &&
              static_cast<int>(Verdict::kError) == 2 &&
              static_cast<int>(Verdict::kUnmatched) == 3);

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

void WriteMetric(const CompareResult& r, const char* key,
                 double CompareRow::*field, JsonWriter* w) {
  w->Key(key);
  w->StartArray();
  for (const CompareRow& row : r.rows) WritePlotNumber(w, row.*field);
  w->EndArray();
}

void WriteMetrics(const CompareResult& r, JsonWriter* w) {
  w->StartObject();
  WriteMetric(r, "cosine", &CompareRow::cosine, w);
  WriteMetric(r, "one_minus_cos", &CompareRow::one_minus_cos, w);
  WriteMetric(r, "max_abs_err", &CompareRow::max_abs_err, w);
  WriteMetric(r, "max_rel_err", &CompareRow::max_rel_err, w);
  w->EndObject();
}

// The strings that occur in more than one cell ("torch.float32", "[8,
// 1024]", "True", "pass", ...), most frequent first, so that their indices
// are short. Long strings (names) are left out: they are rarely repeated.
std::vector<std::string_view> CellDictionary(const CompareResult& r) {
  constexpr size_t kMaxLength = 40;
  std::unordered_map<std::string_view, size_t> count;
  for (const CompareRow& row : r.rows) {
    for (std::string_view cell : row.cells) {
      if (cell.size() >= 2 && cell.size() <= kMaxLength) ++count[cell];
    }
  }
  std::vector<std::pair<size_t, std::string_view>> repeated;
  for (const auto& [text, n] : count) {
    if (n >= 2) repeated.emplace_back(n, text);
  }
  std::sort(repeated.begin(), repeated.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string_view> dict;
  dict.reserve(repeated.size());
  for (const auto& [n, text] : repeated) dict.push_back(text);
  return dict;
}

// Each row's cells, compactly (decoded by the script as it loads): null is
// "the same as the cell to the left" (NPU and Bench columns mostly agree),
// an integer k is dict[k], a string is itself.
void WriteCells(const CompareResult& r,
                const std::vector<std::string_view>& dict, JsonWriter* w) {
  std::unordered_map<std::string_view, size_t> index;
  index.reserve(dict.size());
  for (size_t k = 0; k < dict.size(); ++k) index.emplace(dict[k], k);
  w->StartArray();
  for (const CompareRow& row : r.rows) {
    w->StartArray();
    for (size_t c = 0; c < row.cells.size(); ++c) {
      std::string_view cell = row.cells[c];
      if (c > 0 && cell == row.cells[c - 1]) {
        w->Null();
      } else if (auto it = index.find(cell); it != index.end()) {
        w->Uint64(it->second);
      } else {
        JsonString(w, cell);
      }
    }
    w->EndArray();
  }
  w->EndArray();
}

void WriteNotes(const CompareResult& r, JsonWriter* w) {
  w->StartArray();
  for (const CompareRow& row : r.rows) {
    std::string joined;
    for (const std::string& m : row.messages) {
      if (!joined.empty()) joined += '\n';
      joined += m;
    }
    JsonString(w, joined);
  }
  w->EndArray();
}

template <typename Get>
void WriteIntColumn(const CompareResult& r, const char* key, Get get,
                    JsonWriter* w) {
  w->Key(key);
  w->StartArray();
  for (const CompareRow& row : r.rows) w->Int(get(row));
  w->EndArray();
}

}  // namespace

std::string RenderReportData(const CompareResult& r) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("summary");
  WriteSummaryObject(r, &w);
  w.Key("columns");
  w.StartArray();
  for (const std::string& c : r.columns) JsonString(&w, c);
  w.EndArray();
  std::vector<std::string_view> dict = CellDictionary(r);
  w.Key("dict");
  w.StartArray();
  for (std::string_view text : dict) JsonString(&w, std::string(text));
  w.EndArray();
  w.Key("rows");
  WriteCells(r, dict, &w);
  WriteIntColumn(
      r, "verdict",
      [](const CompareRow& row) { return static_cast<int>(row.verdict); }, &w);
  WriteIntColumn(
      r, "rank", [](const CompareRow& row) { return row.rank; }, &w);
  WriteIntColumn(
      r, "step", [](const CompareRow& row) { return row.step; }, &w);
  w.Key("notes");
  WriteNotes(r, &w);
  w.Key("metrics");
  WriteMetrics(r, &w);
  w.Key("first_divergence_row");
  const FirstDivergence& fd = r.first_divergence;
  if (fd.found && fd.row_index < r.rows.size()) {
    w.Uint64(fd.row_index);
  } else {
    w.Null();
  }
  w.EndObject();
  return ScriptSafeJson(std::string_view(buffer.GetString(), buffer.GetSize()));
}

}  // namespace lockstep::internal
