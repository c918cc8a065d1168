// HuggingFace trainer_state.json and JSONL logs: both are JSON objects of
// numbers keyed by metric name, read through the format layer's Python-typed
// JSON reader (so NaN and Infinity, which Python writes, are accepted).
#include <string>

#include "curve/log_builder.h"
#include "lockstep/curve/readers.h"
#include "lockstep/format/json_reader.h"

namespace lockstep::curve_internal {
namespace {

bool IsNumber(const PyValue& v) { return v.is_number(); }

// Adds every numeric field of `entry` except `step_key` at `step`.
void AddFields(const PyValue& entry, std::string_view step_key, int64_t step,
               CurveLog* log) {
  for (const auto& [key, value] : entry.fields()) {
    if (key == step_key || !IsNumber(value)) continue;
    AddPoint(Series(log, CanonicalMetricName(key)), step, value.as_double());
  }
}

// The step of a JSON entry: the best-ranked step key holding an integral
// number, else (when `first_int` is set) the first key holding an int.
// Returns the key used, or nullptr when there is none.
const std::string* FindStep(const PyValue& entry, bool first_int,
                            int64_t* step) {
  const std::string* best = nullptr;
  int best_rank = 99;
  for (const auto& [key, value] : entry.fields()) {
    int rank = StepKeyRank(key);
    if (rank < 0 || rank >= best_rank || !IsNumber(value)) continue;
    int64_t s;
    if (!ParseStep(value.PyStr(), &s)) continue;
    best = &key;
    best_rank = rank;
    *step = s;
  }
  if (best != nullptr || !first_int) return best;
  for (const auto& [key, value] : entry.fields()) {
    if (value.kind() == PyValue::Kind::kInt) {
      *step = value.as_int();
      return &key;
    }
  }
  return nullptr;
}

}  // namespace

StatusOr<CurveLog> ParseTrainerState(std::string_view text,
                                     std::string_view subject) {
  CurveLog log;
  log.format = CurveFormat::kTrainerState;
  LOCKSTEP_ASSIGN_OR_RETURN(PyValue doc, ParsePyJson(text, subject));
  const PyValue* history = doc.Find("log_history");
  if (history == nullptr || history->kind() != PyValue::Kind::kList) {
    return Status::Corruption(
        subject, "no 'log_history' list. Note: is this a trainer_state.json?");
  }
  int64_t no_step = 0;
  for (const PyValue& entry : history->items()) {
    ++log.lines;
    const PyValue* step = entry.Find("step");
    int64_t s;
    if (step == nullptr || !step->is_number() ||
        !ParseStep(step->PyStr(), &s)) {
      ++log.malformed;
      ++no_step;
      continue;
    }
    AddFields(entry, "step", s, &log);
  }
  if (no_step > 0) {
    log.warnings.push_back(StrCat(std::to_string(no_step),
                                  " log_history entries without an integer "
                                  "'step' skipped"));
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckNotEmpty(log, subject));
  return log;
}

StatusOr<CurveLog> ParseJsonl(std::string_view text, std::string_view subject) {
  CurveLog log;
  log.format = CurveFormat::kJsonl;
  int64_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = Trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty()) continue;
    ++log.lines;
    auto entry = ParsePyJson(line, subject);
    int64_t step = 0;
    const std::string* key = nullptr;
    if (entry.ok() && entry->kind() == PyValue::Kind::kDict) {
      key = FindStep(*entry, /*first_int=*/true, &step);
    }
    if (key == nullptr) {
      if (log.malformed++ == 0) {
        log.warnings.push_back(
            StrCat("line ", std::to_string(line_no), ": ",
                   entry.ok() ? "no step key" : entry.status().message()));
      }
      continue;
    }
    AddFields(*entry, *key, step, &log);
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckNotEmpty(log, subject));
  return log;
}

}  // namespace lockstep::curve_internal
