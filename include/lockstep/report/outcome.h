// The overall outcome of a comparison and the one-line verdict that every
// report (terminal, HTML, JSON) prints for it, so that they never disagree.
// Thread safety: pure functions.
#ifndef LOCKSTEP_REPORT_OUTCOME_H_
#define LOCKSTEP_REPORT_OUTCOME_H_

#include <string>

#include "lockstep/compare/result.h"

namespace lockstep {

// kFail: a first divergence was found or some row has verdict error.
// kWarning: no error, but some row is warning or unmatched (structural
//   differences alone do not fail a run: see msprobe's parameters_grad
//   counter quirk, docs/msprobe_reference.md §3.8).
// kPass: every row passes (also for zero rows).
enum class Outcome { kPass, kWarning, kFail };

// Reads result.summary and result.first_divergence only.
Outcome OverallOutcome(const CompareResult& result);

// "pass", "warning", "fail".
const char* OutcomeName(Outcome outcome);

// The grep-able verdict line, without a trailing newline, e.g.
//   "FAIL: first divergence at Functional.conv2d.0.forward (rank 0, step 1):
//    precision; 64 error, 62 warning, 161 unmatched, 2535 pass of 2822 rows"
//   "PASS: 2822 rows, all pass"
// (one line; wrapped here). Counts come from result.summary.
std::string VerdictLine(const CompareResult& result);

// The origin across ranks in one line, "" when none was found, e.g.
//   "origin: rank 5, step 0, Functional.linear.3.forward (precision);
//    reached ranks 0..4, 6, 7 through Distributed.all_reduce.0.forward
//    from rank 5"
// (one line; wrapped here): the hops grouped by the collective they came
// through, in the order they happened (the first 4 collectives; the rest
// counted); then how many other ranks diverged on their own.
std::string OriginLine(const RankOrigin& origin);

}  // namespace lockstep

#endif  // LOCKSTEP_REPORT_OUTCOME_H_
