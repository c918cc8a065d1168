#include "lockstep/report/csv_report.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <utility>

#include "lockstep/core/file.h"
#include "lockstep/report/csv.h"

namespace lockstep {
namespace {

constexpr size_t kRowsPerPart = 1000000;
constexpr size_t kRowsPerChunk = 16384;  // rows rendered per write

void AppendRows(const CompareResult& result, size_t begin, size_t end,
                std::string* out) {
  for (size_t i = begin; i < end; ++i) {
    // Names, dtypes and non-tensor values come from the user's dumps: a
    // cell that could run as a formula is neutralised.
    const PackedCells& row = result.rows[i].cells;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c) out->push_back(',');
      if (CsvIsFormulaLike(row[c])) {
        AppendCsvCell(CsvNeutralise(row[c]), out);
      } else {
        AppendCsvCell(row[c], out);
      }
    }
    out->push_back('\n');
  }
}

}  // namespace

std::string CompareTimestamp() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d%H%M%S", &tm);
  return buf;
}

std::string RenderCompareCsv(const CompareResult& result, size_t begin,
                             size_t end) {
  std::string out;
  out.reserve((end - begin) * 256 + 512);
  AppendCsvLine(result.columns, &out);
  AppendRows(result, begin, end, &out);
  return out;
}

StatusOr<std::vector<std::string>> WriteCompareCsv(
    const CompareResult& result, const std::string& dir,
    const std::string& timestamp) {
  // Rows of one (step, rank) are contiguous.
  std::vector<std::pair<size_t, size_t>> groups;
  std::map<int, int> steps;
  for (size_t i = 0; i < result.rows.size(); ++i) {
    const CompareRow& r = result.rows[i];
    steps[r.step]++;
    if (groups.empty() || result.rows[groups.back().first].rank != r.rank ||
        result.rows[groups.back().first].step != r.step) {
      groups.emplace_back(i, i);
    }
    groups.back().second = i + 1;
  }
  if (groups.empty()) groups.emplace_back(0, 0);
  std::vector<std::string> paths;
  for (auto [b, e] : groups) {
    std::string stem = dir + "/compare_result_";
    if (groups.size() > 1 && b < result.rows.size()) {
      const CompareRow& r = result.rows[b];
      if (steps.size() > 1) stem += "step" + std::to_string(r.step) + "_";
      stem += "rank" + std::to_string(r.rank) + "_";
    }
    stem += timestamp;
    size_t parts =
        e - b <= kRowsPerPart ? 1 : (e - b + kRowsPerPart - 1) / kRowsPerPart;
    for (size_t p = 0; p < parts; ++p) {
      size_t pb = b + p * kRowsPerPart, pe = std::min(e, pb + kRowsPerPart);
      std::string part = parts > 1 ? "_part_" + std::to_string(p + 1) : "";
      // An earlier run's file of the same second keeps its name: this one
      // takes the next free "_N".
      for (int n = 1;; ++n) {
        if (n > 1000) return Status::IoError(stem, "no free file name");
        std::string path =
            stem + (n > 1 ? "_" + std::to_string(n) : "") + part + ".csv";
        // Written as rendered, a block of rows at a time: the text of a
        // large compare is never whole in memory.
        size_t next = pb;
        ChunkSource source = [&](std::string* chunk) {
          if (next == pb) AppendCsvLine(result.columns, chunk);
          size_t to = std::min(pe, next + kRowsPerChunk);
          AppendRows(result, next, to, chunk);
          next = to;
          return next < pe;
        };
        LOCKSTEP_ASSIGN_OR_RETURN(bool written,
                                  WriteFileIfAbsentFrom(path, source));
        if (written) {
          paths.push_back(path);
          break;
        }
      }
    }
  }
  return paths;
}

}  // namespace lockstep
