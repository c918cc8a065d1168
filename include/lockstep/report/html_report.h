// A self-contained HTML report of a comparison: one file with inline CSS,
// vanilla JavaScript and the rows embedded as JSON; it loads nothing from
// anywhere, so it can be mailed or archived and opened offline.
//
// The page shows the two runs and the mode, the verdict line and summary
// counts, the first divergence (with a link to its row), alignment gaps and
// warnings, a plot of cosine (or, in statistics mode, the relative error on a
// log scale) along the op sequence, and a sortable, filterable, paged table
// of every row with every column. It stays responsive for 100k+ rows: only
// one page of the table is in the DOM, and the plot draws at most one point
// per pixel column (the worst row of that column).
//
// Stable element ids (tests and scripts may rely on them):
//   #verdict           the verdict line (VerdictLine() in report/outcome.h)
//   #summary           the counts: rows, pass, warning, error, unmatched
//   #first-divergence  the first divergent entry, or "No divergence"
//   #gaps, #warnings   present only when there are gaps / warnings
//   #plot              the <svg> plot, drawn by the script
//   #filter            name filter; #verdict-filter  verdict selector
//   #rows              the table body (the current page)
//   #row-count         the number of rows that pass the filters (digits only)
//   #report-data       <script type="application/json"> with the data
// and <body data-ready="1"> once the script has rendered.
//
// The URL fragment sets the view on load and on change, e.g.
//   report.html#verdict=error&filter=conv2d&sort=Cosine&dir=asc&page=2
//   report.html#row=124    (1-based row number, as the "#" column shows)
// Thread safety: pure functions.
#ifndef LOCKSTEP_REPORT_HTML_REPORT_H_
#define LOCKSTEP_REPORT_HTML_REPORT_H_

#include <string>

#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"

namespace lockstep {

// Returns the whole HTML document. Every string from `result` (names, paths,
// messages, cells) is escaped for where it lands (HTML text, attribute, or
// JSON inside <script>); bytes that are not UTF-8 become U+FFFD. Rows with
// fewer cells than `result.columns` show empty cells. NaN metrics are left
// out of the plot; ±Inf ones are drawn at the plot's edge.
std::string RenderHtmlReport(const CompareResult& result);

// Optional parts of the page.
struct HtmlExtras {
  // A loss-curve comparison (an <svg> made by lockstep's curve plot, trusted
  // markup), shown in a card #curves titled `curves_title` (escaped).
  std::string curves_svg;
  std::string curves_title = "Loss curves";
};
std::string RenderHtmlReport(const CompareResult& result,
                             const HtmlExtras& extras);

// Writes RenderHtmlReport(result) to `path` atomically (temporary + rename).
// Errors (as WriteFileAtomic): NotFound when the directory does not exist,
// IoError otherwise; both name the path.
Status WriteHtmlReport(const CompareResult& result, const std::string& path,
                       const HtmlExtras& extras = {});

}  // namespace lockstep

#endif  // LOCKSTEP_REPORT_HTML_REPORT_H_
