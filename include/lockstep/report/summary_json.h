// A machine-readable summary of a comparison (`lockstep compare --json`,
// summary.json beside the CSV). One JSON object, compact, '\n'-terminated:
//
//   {"version": 1,
//    "mode": "tensor" | "statistics" | "md5",
//    "target": str, "baseline": str,          // the two runs' paths
//    "outcome": "pass" | "warning" | "fail",   // see report/outcome.h
//    "verdict_line": str,                      // VerdictLine()
//    "rows": n, "pass": n, "warning": n, "error": n, "unmatched": n,
//    "msprobe": {"pass": n, "warning": n, "error": n},  // msprobe's Result
//    "first_divergence": null | {
//        "entry": str, "rank": n, "step": n (-1: unknown),
//        "reason": "precision" | "overflow" | "nan" | "shape" | "missing" |
//                  "dtype",
//        "detail": str, "row": str (the row's name),
//        "row_index": n (0-based index into the rows) | null when out of range,
//        "cosine": x | null, "max_abs_err": x | null, "max_rel_err": x | null},
//    "origin": null | {                         // dumps of several ranks
//        "rank": n, "step": n, "entry": str,    // only (rank_origin.h)
//        "reason": str, "detail": str, "row_index": n | null,
//        "line": str,                          // OriginLine()
//        "path": [{"rank": n, "step": n, "entry": str (the collective on
//                  rank), "from": n}],         // in the order reached
//        "others": [{"rank": n, "step": n, "entry": str}]},
//    "gaps": [{"entry": str, "kind": "inserted" | "missing" (in/from the
//              target), "rank": n, "position": n}],
//    "warnings": [str]}
//
// NaN and ±Inf numbers are written as null. Strings are UTF-8; bytes that are
// not well-formed UTF-8 (e.g. in a path) become U+FFFD.
// Thread safety: pure functions.
#ifndef LOCKSTEP_REPORT_SUMMARY_JSON_H_
#define LOCKSTEP_REPORT_SUMMARY_JSON_H_

#include <string>

#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"

namespace lockstep {

// Returns the summary JSON text (ends with '\n'). Reads summary,
// first_divergence, gaps, warnings, paths and mode; of the rows, only the
// first divergent one (for its metrics).
std::string RenderSummaryJson(const CompareResult& result);

// Writes RenderSummaryJson(result) to `path` atomically (temporary + rename).
// Errors (as WriteFileAtomic): NotFound when the directory does not exist,
// IoError otherwise; both name the path.
Status WriteSummaryJson(const CompareResult& result, const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_REPORT_SUMMARY_JSON_H_
