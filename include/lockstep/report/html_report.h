// The HTML report of a comparison: a page with inline CSS and vanilla
// JavaScript that loads nothing from elsewhere, so it can be mailed or
// archived and opened offline (file:// included). A small comparison's page
// holds everything (one file). A large one's table goes into a table file
// beside the page (report.html -> report_table.js, a script the page loads
// with <script src>, so it works from file:// too); the page itself keeps
// the summary, the first divergence and the rows around it, the first
// non-pass rows (10,000 rows at most) and the plot, so it stays small, and
// says plainly when the table file is missing or belongs to another report.
//
// The page shows the two runs and the mode, the verdict line and summary
// counts, the first divergence (with a link to its row, the module it runs
// in and its call stack), alignment gaps and warnings, the model's module
// tree (result.modules: each module's worst verdict and largest error), a
// plot of cosine (or, in statistics mode, the relative error on a log scale)
// along the op sequence with the step boundaries marked, and a sortable,
// filterable, paged table of every row with every column (a Step column
// beside the op name). It follows the system's dark scheme. It stays responsive
// for 100k+ rows: only one page of the table is in the DOM, and the plot draws
// at most one point per pixel column (the worst row of that column).
//
// Stable element ids (tests and scripts may rely on them):
//   #verdict           the verdict line (VerdictLine() in report/outcome.h)
//   #summary           the counts: rows, pass, warning, error, unmatched
//   #first-divergence  the first divergent entry, or "No divergence"
//   #fd-module         in it: the entry's module path (when known)
//   #fd-stack          in it: the entry's stack.json frames, <li
//                      class="frame user|lib"> (when known)
//   #modules           the module tree's card (when there are modules);
//                      #module-tree its <ul>, li.mod[data-m=<module>],
//                      li.fd-node the divergent module, li.fd-path above it
//   #gaps, #warnings   present only when there are gaps / warnings
//   #plot              the <svg> plot, drawn by the script
//   #filter            name filter; #verdict-filter  verdict selector
//   #rows              the table body (the current page)
//   #row-count         the number of rows that pass the filters (digits only)
//   #table-note        why the table holds fewer rows than the comparison
//                      (hidden when it holds them all)
//   #report-data       <script type="application/json"> with the data
// and <body data-ready="1" data-ready-ms="<ms since navigation>"> once the
// script has rendered.
//
// The URL fragment sets the view on load and on change, e.g.
//   report.html#verdict=error&filter=conv2d&sort=Cosine&dir=asc&page=2
//   report.html#row=124    (1-based row number, as the "#" column shows)
// Thread safety: pure functions.
#ifndef LOCKSTEP_REPORT_HTML_REPORT_H_
#define LOCKSTEP_REPORT_HTML_REPORT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"

namespace lockstep {

// Tables whose cells hold this many bytes or more (about 67k rows of
// stats_compare_bench's statistics pair) go into a table file by default.
inline constexpr size_t kHtmlEmbedLimitBytes = size_t{32} << 20;

// Optional parts of the page, and where its table goes.
struct HtmlExtras {
  // A loss-curve comparison (an <svg> made by lockstep's curve plot, trusted
  // markup), shown in a card #curves titled `curves_title` (escaped).
  std::string curves_svg;
  std::string curves_title = "Loss curves";
  // The page embeds the table when the rows' cells hold fewer bytes than
  // this (PackedCells::bytes); else it goes into a table file. 0: never.
  size_t embed_limit_bytes = kHtmlEmbedLimitBytes;
};

// A report as files: the page and, for a large table, the table file.
struct HtmlReportFiles {
  std::string page;
  std::string table;  // the table file's text; empty when the page embeds it
};

// Returns the page and its table file. `table_name` is the table file's
// name as the page refers to it (a file name in the page's directory).
// Every string from `result` (names, paths, messages, cells) is escaped for
// where it lands (HTML text, attribute, JSON inside <script>, JavaScript
// string); bytes that are not UTF-8 become U+FFFD. Rows with fewer cells
// than `result.columns` show empty cells. NaN metrics are left out of the
// plot; ±Inf ones are drawn at the plot's edge.
HtmlReportFiles RenderHtmlReportFiles(const CompareResult& result,
                                      const HtmlExtras& extras,
                                      const std::string& table_name);

// A large report's table file, rendered ahead of its page. It reads only the
// rows (cells, verdicts, messages, rank, step) and the columns, never the
// summary or first divergence, so it may be rendered on another thread while
// FinishResult (compare/comparator.h) makes those.
struct HtmlTableFile {
  std::string text;  // empty when the page embeds its table
  std::string id;    // the page checks that its table file has this id
};
// The size rule is extras.embed_limit_bytes, as for RenderHtmlReportFiles.
HtmlTableFile RenderHtmlTableFile(const CompareResult& result,
                                  const HtmlExtras& extras);

// Returns the whole HTML document with the table embedded, whatever its
// size (RenderHtmlReportFiles with no limit).
std::string RenderHtmlReport(const CompareResult& result);
std::string RenderHtmlReport(const CompareResult& result,
                             const HtmlExtras& extras);

// The table file that goes with the page at `page_path`: its name without
// a ".html"/".htm" extension + "_table.js" ("out/report.html" ->
// "out/report_table.js").
std::string HtmlTableFilePath(const std::string& page_path);

// Writes RenderHtmlReportFiles(result, extras, ...) to `path` and, when the
// table does not fit the page, HtmlTableFilePath(path): each atomically
// (temporary + rename, never through a symbolic link), the table file
// first. When the page embeds its table, a table file an earlier report
// left at that name is removed (a link there is removed, not followed).
// Returns the paths written, the page first. Errors (as WriteFileAtomic):
// NotFound when the directory does not exist, IoError otherwise; both name
// the path.
StatusOr<std::vector<std::string>> WriteHtmlReport(
    const CompareResult& result, const std::string& path,
    const HtmlExtras& extras = {});
// As above, with the table file rendered ahead by RenderHtmlTableFile(result,
// extras) (the same rows: the result may have been finished since).
StatusOr<std::vector<std::string>> WriteHtmlReport(const CompareResult& result,
                                                   const std::string& path,
                                                   const HtmlExtras& extras,
                                                   HtmlTableFile table);

}  // namespace lockstep

#endif  // LOCKSTEP_REPORT_HTML_REPORT_H_
