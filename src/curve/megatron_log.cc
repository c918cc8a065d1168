// Megatron-LM / DeepSpeed-Megatron stdout: per-interval lines
//   " iteration       20/    1000 | consumed samples: 80 | ... |
//    lm loss: 1.203115E+01 | loss scale: 32768.0 | ... |"
// and validation lines
//   " validation loss at iteration 100 | lm loss value: 8.017406E+00 | ..."
// Everything else in the log (shell traces, memory reports) is ignored.
#include <string>

#include "curve/log_builder.h"
#include "lockstep/curve/readers.h"

namespace lockstep::curve_internal {
namespace {

constexpr std::string_view kIteration = "iteration";
constexpr std::string_view kValidation = "validation loss at iteration";

bool ConsumePrefix(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// The series name of a "key: value" field: canonical where one exists,
// else the key snake_cased; validation fields are "eval_" + that.
std::string FieldName(std::string_view key, bool validation) {
  if (!validation) {
    std::string canonical = CanonicalMetricName(SnakeCase(key));
    return canonical;
  }
  std::string snake = SnakeCase(key);
  if (snake == "lm_loss_value") return kMetricEvalLoss;
  return "eval_" + snake;
}

// Adds the "key: value" fields of `rest` (separated by '|') at `step`.
// Fields without ':' or with a non-numeric value are skipped.
void AddFields(std::string_view rest, int64_t step, bool validation,
               CurveLog* log) {
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    std::string_view field = rest.substr(0, bar);
    rest.remove_prefix(bar == std::string_view::npos ? rest.size() : bar + 1);
    size_t colon = field.rfind(':');
    double v;
    if (colon == std::string_view::npos ||
        !ParseDouble(field.substr(colon + 1), &v)) {
      continue;
    }
    std::string_view key = Trim(field.substr(0, colon));
    if (key.empty()) continue;
    AddPoint(Series(log, FieldName(key, validation)), step, v);
  }
}

std::string_view SkipBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  return s;
}

// "  20/    1000 |..." -> step 20 and the text after the first '|'.
bool ParseIterationHead(std::string_view s, int64_t* step,
                        std::string_view* rest) {
  size_t bar = s.find('|');
  if (bar == std::string_view::npos) return false;
  std::string_view head = s.substr(0, bar);
  size_t slash = head.find('/');
  if (!ParseStep(head.substr(0, slash), step)) return false;
  int64_t total;
  if (slash != std::string_view::npos &&
      !ParseStep(head.substr(slash + 1), &total)) {
    return false;
  }
  *rest = s.substr(bar + 1);
  return true;
}

// Reads one line. Returns false when it looks like an iteration line but
// does not parse (malformed).
bool ParseLine(std::string_view line, CurveLog* log) {
  std::string_view s = SkipBlanks(line);
  // Megatron-LM since 2023 prefixes a timestamp: " [2024-01-01 10:00:00]".
  if (!s.empty() && s[0] == '[' && s.find(']') != std::string_view::npos) {
    s = SkipBlanks(s.substr(s.find(']') + 1));
  }
  bool validation = ConsumePrefix(&s, kValidation);
  if (!validation) {
    if (!ConsumePrefix(&s, kIteration)) return true;
    // "iterations ...", "iteration-time": not an iteration line.
    if (s.empty() || (s[0] != ' ' && s[0] != '\t')) return true;
  }
  int64_t step;
  std::string_view rest;
  if (!ParseIterationHead(s, &step, &rest)) return false;
  AddFields(rest, step, validation, log);
  return true;
}

}  // namespace

StatusOr<CurveLog> ParseMegatron(std::string_view text,
                                 std::string_view subject) {
  CurveLog log;
  log.format = CurveFormat::kMegatron;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++log.lines;
    if (ParseLine(line, &log)) continue;
    if (log.malformed++ < 5) {
      log.warnings.push_back(StrCat("line ", std::to_string(log.lines),
                                    ": iteration line without a step"));
    }
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckNotEmpty(log, subject));
  return log;
}

}  // namespace lockstep::curve_internal
