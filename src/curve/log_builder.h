// Pieces the curve readers share: adding points, number parsing, the
// step-key rule, the final "was anything read" check, and the per-format
// parsers that readers.cc dispatches to. Private to src/curve.
#ifndef LOCKSTEP_SRC_CURVE_LOG_BUILDER_H_
#define LOCKSTEP_SRC_CURVE_LOG_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/curve/curve_log.h"

namespace lockstep::curve_internal {

template <typename... Pieces>
std::string StrCat(const Pieces&... pieces) {
  std::string out;
  (out.append(std::string_view(pieces)), ...);
  return out;
}

// The series `name` of `log`, created (empty) on first use.
CurveSeries* Series(CurveLog* log, const std::string& name);

inline void AddPoint(CurveSeries* s, int64_t step, double value) {
  s->points.push_back(CurvePoint{step, value});
}

std::string_view Trim(std::string_view s);

// A decimal or exponent number, "nan", "inf", "Infinity" (any case, optional
// sign), surrounding blanks allowed. False on anything else.
bool ParseDouble(std::string_view s, double* out);

// An integer ("12", "12.0", "1.2e3" with no fraction) in int64 range.
bool ParseStep(std::string_view s, int64_t* out);

// Rank of `key` as a step key: 0 "step", 1 "global_step", 2 "iteration",
// 3 "iter", 4 "epoch" (case insensitive); -1 for other keys.
int StepKeyRank(std::string_view key);

// Lower-case, runs of other characters than [a-z0-9] become one '_',
// trimmed: "elapsed time per iteration (ms)" -> "elapsed_time_per_..._ms".
std::string SnakeCase(std::string_view prose);

// OK when `log` has at least one point; else Corruption naming `subject`
// with how many lines/records were read and skipped.
Status CheckNotEmpty(const CurveLog& log, std::string_view subject);

// The per-format parsers. Each fills lines/malformed/warnings and returns
// Corruption when nothing could be read.
StatusOr<CurveLog> ParseTrainerState(std::string_view text,
                                     std::string_view subject);
StatusOr<CurveLog> ParseJsonl(std::string_view text, std::string_view subject);
StatusOr<CurveLog> ParseMegatron(std::string_view text,
                                 std::string_view subject);
// `delimiter` 0 sniffs it from the header.
StatusOr<CurveLog> ParseCsv(std::string_view text, std::string_view subject,
                            char delimiter);
StatusOr<CurveLog> ParseTfEvents(std::string_view data,
                                 std::string_view subject);

}  // namespace lockstep::curve_internal

#endif  // LOCKSTEP_SRC_CURVE_LOG_BUILDER_H_
