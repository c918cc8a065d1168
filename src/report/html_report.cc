// The HTML report's document: the parts that need no script (header,
// verdict, counts, first divergence, gaps, warnings) are rendered here, so
// they read well even with scripts blocked; the plot and the table are drawn
// by the embedded script from the embedded data.
#include "lockstep/report/html_report.h"

#include <algorithm>
#include <string>

#include "html_internal.h"
#include "json_util.h"
#include "lockstep/core/file.h"
#include "lockstep/core/markup.h"
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
      "<section id=\"summary\" class=\"card summary\"><h2>Rows</h2><div "
      "class=\"counts\">";
  *out += Count(s.rows, "rows", "all") + Count(s.pass, "pass", "pass") +
          Count(s.warning, "warning", "warning") +
          Count(s.error, "error", "error") +
          Count(s.unmatched, "unmatched", "unmatched");
  *out += "</div><p class=\"msprobe\">msprobe Result column: <b>" +
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
  if (!fd.detail.empty())
    *out += "<p class=\"fd-detail\">" + HtmlEscape(fd.detail) + "</p>";
  AppendDivergenceLink(r, out);
  *out += "</section>\n";
}

void AppendGaps(const CompareResult& r, std::string* out) {
  if (r.gaps.empty()) return;
  size_t shown = std::min(r.gaps.size(), kMaxListedGaps);
  *out += "<section id=\"gaps\" class=\"card list\"><details";
  *out += r.gaps.size() <= 20 ? " open>" : ">";
  *out += "<summary><h2>Alignment gaps <span class=\"badge\">" +
          std::to_string(r.gaps.size()) +
          "</span></h2><span class=\"hint\">entries present in one run "
          "only</span></summary>";
  *out +=
      "<table "
      "class=\"mini\"><thead><tr><th>entry</th><th>where</th><th>rank</th>"
      "<th>position</th></tr></thead><tbody>";
  for (size_t i = 0; i < shown; ++i) {
    const AlignmentGap& g = r.gaps[i];
    *out += std::string("<tr class=\"") +
            (g.in_target ? "inserted" : "missing") + "\"><td><code>" +
            HtmlEscape(g.entry) + "</code></td><td>" +
            (g.in_target ? "inserted in target" : "missing from target") +
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
<div class="table-wrap" id="table-wrap"><table id="table"><thead><tr id="head"></tr></thead>
<tbody id="rows"></tbody></table></div>
<p class="hint foot">Click a header to sort (again to reverse); click a row for all of its cells.</p>
</section>
<noscript><p class="card">The plot and the table need JavaScript.</p></noscript>
)HTML";
}

void AppendScripts(const CompareResult& r, std::string* out) {
  *out += "<script type=\"application/json\" id=\"report-data\">";
  *out += internal::RenderReportData(r);
  *out += "</script>\n<script>(function () {\n'use strict';\n";
  *out += internal::kReportScriptTable;
  *out += internal::kReportScriptPlot;
  *out += internal::kReportScriptMain;
  *out += "})();\n</script>\n";
}

}  // namespace

namespace internal {

std::string HtmlEscape(std::string_view s) {
  return EscapeMarkup(SanitizeUtf8(s));
}

}  // namespace internal

std::string RenderHtmlReport(const CompareResult& result) {
  return RenderHtmlReport(result, HtmlExtras{});
}

std::string RenderHtmlReport(const CompareResult& result,
                             const HtmlExtras& extras) {
  std::string out;
  out.reserve(4096 + result.rows.size() * 256);
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
  AppendFirstDivergence(result, &out);
  AppendSummary(result, &out);
  out += "</div>\n";
  AppendGaps(result, &out);
  AppendWarnings(result, &out);
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
  AppendScripts(result, &out);
  out += "</body></html>\n";
  return out;
}

Status WriteHtmlReport(const CompareResult& result, const std::string& path,
                       const HtmlExtras& extras) {
  return WriteFileAtomic(path, RenderHtmlReport(result, extras));
}

}  // namespace lockstep
