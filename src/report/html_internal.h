// Pieces of the HTML report (html_report.h): the embedded data, the style
// sheet and the script. Kept apart so that each file holds one concept.
// Thread safety: pure functions and constants.
#ifndef LOCKSTEP_SRC_REPORT_HTML_INTERNAL_H_
#define LOCKSTEP_SRC_REPORT_HTML_INTERNAL_H_

#include <string>
#include <string_view>

#include "lockstep/compare/result.h"

namespace lockstep::internal {

// Escapes & < > " ' for HTML text and attribute values (and sanitizes UTF-8).
std::string HtmlEscape(std::string_view s);

// The JSON embedded in #report-data, already made safe for <script>:
//   {"summary": {summary_json.h object}, "columns": [str],
//    "rows": [[cell, ...]], "verdict": [0 pass | 1 warning | 2 error |
//    3 unmatched], "rank": [n], "step": [n], "notes": [str ("\n"-joined
//    messages)], "metrics": {"cosine" | "one_minus_cos" | "max_abs_err" |
//    "max_rel_err": [x | null (NaN) | "inf" | "-inf"]},
//    "first_divergence_row": n | null}
std::string RenderReportData(const CompareResult& result);

// The style sheet (inside <style>).
extern const std::string_view kReportCss;

// The script, in three parts concatenated inside one function scope: the
// table (state, filters, sorting, paging, URL fragment), the plot, and the
// start-up code.
extern const std::string_view kReportScriptTable;
extern const std::string_view kReportScriptPlot;
extern const std::string_view kReportScriptMain;

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_REPORT_HTML_INTERNAL_H_
