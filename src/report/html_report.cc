// The HTML report's document: the parts that need no script (header,
// verdict, counts, first divergence, gaps, warnings) are rendered here, so
// they read well even with scripts blocked; the plot and the table are drawn
// by the embedded script from the embedded data and, for a large table,
// the table file beside the page.
#include "lockstep/report/html_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "html_internal.h"
#include "json_util.h"
#include "lockstep/core/file.h"
#include "lockstep/core/markup.h"
#include "lockstep/curve/curve_plot.h"
#include "lockstep/report/outcome.h"

namespace lockstep {
namespace {

using internal::HtmlEscape;

// Lists longer than this are cut in the page (the summary JSON has them all).
constexpr size_t kMaxListedGaps = 1000;
constexpr size_t kMaxListedWarnings = 200;

std::string Count(int64_t n, const char* label, const char* verdict) {
  return std::string("<button type=\"button\" class=\"count v-") + verdict +
         "\" data-verdict=\"" + verdict + "\" title=\"Show " + label +
         " rows\"><b>" + std::to_string(n) + "</b><span>" + label +
         "</span></button>";
}

void AppendHeader(const CompareResult& r, std::string* out) {
  *out +=
      "<header class=\"top\"><div class=\"brand\">lockstep <span>compare "
      "report</span></div>";
  *out += "<dl class=\"runs\"><div><dt>target</dt><dd>" +
          HtmlEscape(r.target_path) + "</dd></div><div><dt>baseline</dt><dd>" +
          HtmlEscape(r.baseline_path) +
          "</dd></div><div><dt>mode</dt><dd class=\"mode\">" +
          CompareModeName(r.mode) + "</dd></div></dl></header>\n";
}

void AppendVerdict(const CompareResult& r, std::string* out) {
  *out += std::string("<p id=\"verdict\" class=\"verdict o-") +
          OutcomeName(OverallOutcome(r)) + "\">" + HtmlEscape(VerdictLine(r)) +
          "</p>\n";
}

void AppendSummary(const CompareResult& r, std::string* out) {
  const CompareSummary& s = r.summary;
  *out +=
      "<section id=\"summary\" class=\"card summary\"><h2>Rows, by "
      "lockstep's verdict</h2><div class=\"counts\">";
  *out += Count(s.rows, "rows", "all") + Count(s.pass, "pass", "pass") +
          Count(s.warning, "warning", "warning") +
          Count(s.error, "error", "error") +
          Count(s.unmatched, "unmatched", "unmatched");
  // Two sets of counts: lockstep's above, msprobe's own below, each said
  // to be whose (msprobe's fixed thresholds count an unmatched row as pass).
  *out +=
      "</div><p class=\"msprobe\">For comparison, msprobe's own Result "
      "column (its fixed thresholds; unmatched rows count as pass): <b>" +
      std::to_string(s.msprobe_pass) + "</b> pass · <b>" +
      std::to_string(s.msprobe_warning) + "</b> warning · <b>" +
      std::to_string(s.msprobe_error) + "</b> error</p></section>\n";
}

void AppendDivergenceLink(const CompareResult& r, std::string* out) {
  const FirstDivergence& fd = r.first_divergence;
  if (fd.row_index >= r.rows.size()) return;
  std::string number = std::to_string(fd.row_index + 1);
  std::string name =
      fd.row.empty() ? std::string(r.rows[fd.row_index].npu_name()) : fd.row;
  *out += "<a id=\"fd-link\" class=\"fd-link\" href=\"#row=" + number +
          "\" data-row=\"" + std::to_string(fd.row_index) + "\">Go to row " +
          number + ": <code>" + HtmlEscape(name) + "</code> &rarr;</a>";
}

void AppendFirstDivergence(const CompareResult& r, std::string* out) {
  const FirstDivergence& fd = r.first_divergence;
  if (!fd.found) {
    *out +=
        "<section id=\"first-divergence\" class=\"card fd none\"><h2>First "
        "divergence</h2>"
        "<p class=\"fd-entry\">No divergence</p><p class=\"fd-detail\">No "
        "operator's error exceeds what its inputs explain, and every row "
        "passes.</p></section>\n";
    return;
  }
  *out +=
      "<section id=\"first-divergence\" class=\"card fd found\"><h2>" +
      std::string(fd.drift ? "The runs drift apart from" : "First divergence") +
      "</h2>";
  *out += "<p class=\"fd-entry\"><code>" + HtmlEscape(fd.entry) + "</code></p>";
  *out += "<p class=\"fd-meta\"><span class=\"tag reason\">" +
          std::string(DivergenceReasonName(fd.reason)) +
          "</span><span class=\"tag\">rank " + std::to_string(fd.rank) +
          "</span>";
  if (fd.step >= 0)
    *out += "<span class=\"tag\">step " + std::to_string(fd.step) + "</span>";
  *out += "</p>";
  *out += internal::DivergenceModuleHtml(r);
  if (!fd.detail.empty())
    *out += "<p class=\"fd-detail\">" + HtmlEscape(fd.detail) + "</p>";
  AppendDivergenceLink(r, out);
  *out += internal::DivergenceStackHtml(fd);
  *out += "</section>\n";
}

std::string Short(double x) {
  if (std::isnan(x)) return "&ndash;";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", x);
  return buf;
}

// Checkpoints have no order, so no first divergence: the rows with the
// largest errors stand in its place.
void AppendLargestErrors(const CompareResult& r, std::string* out) {
  bool any = !r.largest_errors.empty();
  *out += std::string("<section id=\"largest-errors\" class=\"card fd ") +
          (OverallOutcome(r) == Outcome::kPass ? "none" : "found") +
          "\"><h2>Largest errors</h2>";
  if (!any) {
    *out +=
        "<p class=\"fd-entry\">No differences</p><p class=\"fd-detail\">"
        "Every parameter of the target equals the baseline's.</p>"
        "</section>\n";
    return;
  }
  *out +=
      "<table class=\"mini\"><thead><tr><th>row</th><th>name</th>"
      "<th>verdict</th><th>rel. error</th><th>cosine</th><th>max abs err</th>"
      "<th>why</th></tr></thead><tbody>";
  for (size_t i : r.largest_errors) {
    const CompareRow& row = r.rows[i];
    std::string n = std::to_string(i + 1);
    *out += "<tr><td><a href=\"#row=" + n + "\">" + n + "</a></td><td><code>" +
            HtmlEscape(row.npu_name()) + "</code></td><td>" +
            VerdictName(row.verdict) + "</td><td>" + Short(row.error) +
            "</td><td>" + Short(row.cosine) + "</td><td>" +
            Short(row.max_abs_err) + "</td><td>" +
            HtmlEscape(row.messages.empty() ? "" : row.messages[0]) +
            "</td></tr>";
  }
  *out += "</tbody></table></section>\n";
}

void AppendGaps(const CompareResult& r, std::string* out) {
  if (r.gaps.empty()) return;
  size_t shown = std::min(r.gaps.size(), kMaxListedGaps);
  *out += "<section id=\"gaps\" class=\"card list\"><details";
  *out += r.gaps.size() <= 20 ? " open>" : ">";
  bool ckpt = r.subject == CompareSubject::kCheckpoints;
  *out +=
      std::string("<summary><h2>") +
      (ckpt ? "In the baseline only" : "Alignment gaps") +
      " <span class=\"badge\">" + std::to_string(r.gaps.size()) +
      "</span></h2><span class=\"hint\">" +
      (ckpt ? "names the target lacks" : "entries present in one run only") +
      "</span></summary>";
  *out +=
      "<table "
      "class=\"mini\"><thead><tr><th>entry</th><th>where</th><th>step</th>"
      "<th>rank</th><th>position</th></tr></thead><tbody>";
  for (size_t i = 0; i < shown; ++i) {
    const AlignmentGap& g = r.gaps[i];
    *out += std::string("<tr class=\"") +
            (g.in_target ? "inserted" : "missing") + "\"><td><code>" +
            HtmlEscape(g.entry) + "</code></td><td>" +
            (g.in_target ? "inserted in target" : "missing from target") +
            "</td><td>" + (g.step >= 0 ? std::to_string(g.step) : "") +
            "</td><td>" + std::to_string(g.rank) + "</td><td>" +
            std::to_string(g.position) + "</td></tr>";
  }
  *out += "</tbody></table>";
  if (shown < r.gaps.size()) {
    *out += "<p class=\"hint\">&hellip; and " +
            std::to_string(r.gaps.size() - shown) +
            " more (all are in the summary JSON).</p>";
  }
  *out += "</details></section>\n";
}

void AppendWarnings(const CompareResult& r, std::string* out) {
  if (r.warnings.empty()) return;
  size_t shown = std::min(r.warnings.size(), kMaxListedWarnings);
  *out += "<section id=\"warnings\" class=\"card list\"><details";
  *out += r.warnings.size() <= 10 ? " open>" : ">";
  *out += "<summary><h2>Warnings <span class=\"badge\">" +
          std::to_string(r.warnings.size()) +
          "</span></h2><span class=\"hint\">problems met while "
          "comparing</span></summary><ul>";
  for (size_t i = 0; i < shown; ++i)
    *out += "<li>" + HtmlEscape(r.warnings[i]) + "</li>";
  *out += "</ul>";
  if (shown < r.warnings.size()) {
    *out += "<p class=\"hint\">&hellip; and " +
            std::to_string(r.warnings.size() - shown) +
            " more (all are in the summary JSON).</p>";
  }
  *out += "</details></section>\n";
}

// Which steps the tree's verdicts cover, with the switch to all of them.
std::string StepScope(const CompareResult& r) {
  int step = internal::ModuleTreeStep(r);
  if (step < 0) return "";
  return " in step " + std::to_string(step) +
         ", the first divergence's (later steps may differ everywhere) "
         "<label class=\"ctl\"><input type=\"checkbox\" "
         "id=\"module-all-steps\"> all steps</label>";
}

// The module tree's card; the script fills #module-tree.
void AppendModulesCard(const CompareResult& r, std::string* out) {
  if (r.modules.empty()) return;
  *out +=
      "<section id=\"modules\" class=\"card modules-card\"><div "
      "class=\"card-head\"><h2>Model <span class=\"badge\">" +
      std::to_string(r.modules.size()) +
      (r.modules.size() == 1 ? " module" : " modules") +
      "</span></h2><span class=\"hint\">each module: the worst "
      "verdict and the largest relative error of the rows inside it (its "
      "operators, by construct.json)" +
      StepScope(r) +
      "; click a name for its worst "
      "row</span></div><div id=\"module-box\" class=\"module-box\"><ul "
      "id=\"module-tree\" class=\"mtree\" "
      "role=\"tree\"></ul></div></section>\n";
}

void AppendPlotCard(std::string* out) {
  *out +=
      "<section class=\"card plot-card\"><div class=\"card-head\"><h2 "
      "id=\"plot-title\">Plot"
      "</h2><label class=\"ctl\">metric <select "
      "id=\"plot-metric\"></select></label>"
      "<span class=\"legend\"><i class=\"v-error\"></i>error<i "
      "class=\"v-warning\"></i>warning"
      "<i class=\"v-unmatched\"></i>unmatched<i class=\"fdl\"></i>first "
      "divergence</span>"
      "</div><svg id=\"plot\" role=\"img\" aria-label=\"metric along the op "
      "sequence\">"
      "</svg><div id=\"plot-tip\" class=\"tip\" hidden></div></section>\n";
}

void AppendTableCard(std::string* out) {
  *out += R"HTML(<section class="card table-card"><div class="toolbar">
<input id="filter" type="search" placeholder="Filter by name (press /)" autocomplete="off">
<select id="verdict-filter" title="verdict"><option value="all">all verdicts</option>
<option value="error">error</option><option value="warning">warning</option>
<option value="unmatched">unmatched</option><option value="pass">pass</option></select>
<details class="colpick"><summary>Columns</summary><div id="col-list"></div></details>
<div class="pager">showing <span id="range">0</span> of <span id="row-count"></span> rows
<span id="filtered-note"></span>
<button type="button" id="prev" title="previous page (p)">&lsaquo;</button>
<span id="page-of"></span>
<button type="button" id="next" title="next page (n)">&rsaquo;</button>
<select id="page-size" title="rows per page"><option>100</option><option selected>200</option>
<option>500</option><option>1000</option></select></div></div>
<p id="table-note" class="table-note" hidden></p>
<div class="table-wrap" id="table-wrap"><table id="table"><thead><tr id="head"></tr></thead>
<tbody id="rows"></tbody></table></div>
<p class="hint foot">Click a header to sort (again to reverse); click a row for all of its cells.</p>
</section>
<noscript><p class="card">The plot and the table need JavaScript.</p></noscript>
)HTML";
}

// `name` for a URL path segment: bytes other than [A-Za-z0-9._-] become %XX.
std::string PercentEncode(std::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '.' || c == '_' || c == '-') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

void AppendScripts(const CompareResult& r, const HtmlExtras& extras,
                   const internal::TableFileRef* table_file, std::string* out) {
  *out += "<script type=\"application/json\" id=\"report-data\">";
  *out += internal::RenderReportData(r, table_file);
  *out += "</script>\n";
  if (table_file) {
    *out += "<script src=\"" + HtmlEscape(PercentEncode(table_file->name)) +
            "\"></script>\n";
  }
  *out += "<script>(function () {\n'use strict';\n";
  *out += internal::kReportScriptData;
  *out += internal::kReportScriptTable;
  *out += internal::kReportScriptPlot;
  *out += internal::kReportScriptModules;
  *out += internal::kReportScriptMain;
  *out += "})();\n</script>\n";
  if (!extras.curves_svg.empty())
    *out += "<script>\n" + std::string(CurveHoverScript()) + "</script>\n";
}

std::string RenderPage(const CompareResult& result, const HtmlExtras& extras,
                       const internal::TableFileRef* table_file) {
  std::string out;
  out.reserve(65536 + (table_file ? 0 : result.rows.size() * 64));
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\">\n<title>";
  out += HtmlEscape("lockstep " +
                    std::string(OutcomeName(OverallOutcome(result))) + ": " +
                    result.target_path + " vs " + result.baseline_path);
  out += "</title>\n<style>\n";
  out += internal::kReportCss;
  out += "</style></head>\n<body>\n";
  AppendHeader(result, &out);
  out += "<main>\n";
  AppendVerdict(result, &out);
  out += "<div class=\"overview\">\n";
  if (result.subject == CompareSubject::kCheckpoints) {
    AppendLargestErrors(result, &out);
  } else {
    AppendFirstDivergence(result, &out);
  }
  AppendSummary(result, &out);
  out += "</div>\n";
  out += internal::RanksCardHtml(result);
  AppendGaps(result, &out);
  AppendWarnings(result, &out);
  AppendModulesCard(result, &out);
  AppendPlotCard(&out);
  if (!extras.curves_svg.empty()) {
    out += "<section id=\"curves\" class=\"card\"><h2>";
    out += HtmlEscape(extras.curves_title);
    out += "</h2>\n";
    out += extras.curves_svg;
    out += "\n</section>\n";
  }
  AppendTableCard(&out);
  out += "</main>\n";
  AppendScripts(result, extras, table_file, &out);
  out += "</body></html>\n";
  return out;
}

size_t CellBytes(const CompareResult& result) {
  size_t n = 0;
  for (const CompareRow& row : result.rows) n += row.cells.bytes();
  return n;
}

std::string BaseName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

HtmlReportFiles PageWithTable(const CompareResult& result,
                              const HtmlExtras& extras,
                              const std::string& table_name,
                              HtmlTableFile table) {
  HtmlReportFiles files;
  if (table.text.empty()) {
    files.page = RenderPage(result, extras, nullptr);
    return files;
  }
  internal::TableFileRef ref;
  ref.name = table_name;
  ref.id = std::move(table.id);
  files.table = std::move(table.text);
  files.page = RenderPage(result, extras, &ref);
  return files;
}

}  // namespace

namespace internal {

std::string HtmlEscape(std::string_view s) {
  return EscapeMarkup(SanitizeUtf8(s));
}

}  // namespace internal

HtmlTableFile RenderHtmlTableFile(const CompareResult& result,
                                  const HtmlExtras& extras) {
  HtmlTableFile table;
  if (CellBytes(result) >= extras.embed_limit_bytes)
    table.text = internal::RenderTableFile(result, &table.id);
  return table;
}

HtmlReportFiles RenderHtmlReportFiles(const CompareResult& result,
                                      const HtmlExtras& extras,
                                      const std::string& table_name) {
  return PageWithTable(result, extras, table_name,
                       RenderHtmlTableFile(result, extras));
}

std::string RenderHtmlReport(const CompareResult& result) {
  return RenderHtmlReport(result, HtmlExtras{});
}

std::string RenderHtmlReport(const CompareResult& result,
                             const HtmlExtras& extras) {
  return RenderPage(result, extras, nullptr);
}

std::string HtmlTableFilePath(const std::string& page_path) {
  std::string stem = page_path;
  for (const char* ext : {".html", ".htm"}) {
    size_t n = std::strlen(ext);
    if (stem.size() > n && BaseName(stem).size() > n &&
        stem.compare(stem.size() - n, n, ext) == 0) {
      stem.resize(stem.size() - n);
      break;
    }
  }
  return stem + "_table.js";
}

StatusOr<std::vector<std::string>> WriteHtmlReport(const CompareResult& result,
                                                   const std::string& path,
                                                   const HtmlExtras& extras) {
  return WriteHtmlReport(result, path, extras,
                         RenderHtmlTableFile(result, extras));
}

StatusOr<std::vector<std::string>> WriteHtmlReport(const CompareResult& result,
                                                   const std::string& path,
                                                   const HtmlExtras& extras,
                                                   HtmlTableFile table) {
  std::string table_path = HtmlTableFilePath(path);
  HtmlReportFiles files =
      PageWithTable(result, extras, BaseName(table_path), std::move(table));
  if (files.table.empty()) {
    LOCKSTEP_RETURN_IF_ERROR(WriteFileAtomic(path, files.page));
    LOCKSTEP_RETURN_IF_ERROR(RemoveFileIfPresent(table_path));
    return std::vector<std::string>{path};
  }
  // The table file first, so that no page refers to one not yet written;
  // should the page's write fail, the earlier page stays, finds that this
  // table file's id is not its own, and says so.
  LOCKSTEP_RETURN_IF_ERROR(WriteFileAtomic(table_path, files.table));
  LOCKSTEP_RETURN_IF_ERROR(WriteFileAtomic(path, files.page));
  return std::vector<std::string>{path, table_path};
}

}  // namespace lockstep
