// What `lockstep replay` writes (docs/replay.md):
//   replay.csv    one row per check: step, rank, entry, tensor, op, dtype,
//                 kind, max ulp, max rel, CPU ulp, bound, verdict, reason,
//                 bound rule, worst element (index, recorded, float64)
//   summary.json  {"tool", "dump", "verdict": "suspect"|"no suspect",
//                  "first_suspect": {"entry", "tensor", "op", "step", "rank",
//                  "reason", "max_ulp", "bound", "bound_rule"} or null,
//                  "counts": {...}, "not_replayable": [{"entry", "op",
//                  "reason"}], "warnings": [...]}
//   report.html   self-contained: the first suspect, the suspects, what was
//                 not replayed and why, and every check
// Thread safety: pure functions.
#ifndef LOCKSTEP_REPORT_REPLAY_REPORT_H_
#define LOCKSTEP_REPORT_REPLAY_REPORT_H_

#include <string>

#include "lockstep/core/status.h"
#include "lockstep/format/replay_result.h"

namespace lockstep {

std::string ReplayCsv(const ReplayResult& r);
std::string ReplaySummaryJson(const ReplayResult& r);
std::string ReplayHtml(const ReplayResult& r);
// A few lines for the terminal: counts, the first suspect and its bound.
std::string ReplayTerminalSummary(const ReplayResult& r);

// Writes replay.csv, summary.json and report.html into `dir` (created).
Status WriteReplayReports(const ReplayResult& r, const std::string& dir);

}  // namespace lockstep

#endif  // LOCKSTEP_REPORT_REPLAY_REPORT_H_
