// The curve model: what one training log holds, as named scalar series over
// integer steps. Readers (curve/readers.h) produce it from HuggingFace
// trainer_state.json, Megatron-LM/DeepSpeed stdout, CSV/TSV, JSONL and
// TensorBoard event files; analysis (curve/curve_compare.h) aligns several.
// Thread safety: plain values.
#ifndef LOCKSTEP_CURVE_CURVE_LOG_H_
#define LOCKSTEP_CURVE_CURVE_LOG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace lockstep {

struct CurvePoint {
  int64_t step = 0;
  double value = 0;  // NaN and ±inf are kept (a nan loss is data)
};

// One metric of one log, in the log's order (steps normally increasing; a
// step logged twice keeps both points, the later one wins in analysis).
struct CurveSeries {
  std::string name;  // "loss", "eval_loss", "learning_rate", "loss_scale", ...
  std::vector<CurvePoint> points;
};

// Log formats lockstep reads.
enum class CurveFormat { kAuto, kTrainerState, kMegatron, kCsv, kJsonl, kTensorBoard };
const char* CurveFormatName(CurveFormat f);  // "auto", "trainer_state", ...

// Canonical metric names, shared by every reader so logs of different
// formats line up: a reader maps its own spellings onto these where they
// mean the same thing ("lm loss" -> "loss", "lr" -> "learning_rate").
inline constexpr const char* kMetricLoss = "loss";
inline constexpr const char* kMetricEvalLoss = "eval_loss";
inline constexpr const char* kMetricLearningRate = "learning_rate";
inline constexpr const char* kMetricLossScale = "loss_scale";
inline constexpr const char* kMetricGradNorm = "grad_norm";
inline constexpr const char* kMetricSkipped = "skipped_iterations";
inline constexpr const char* kMetricNan = "nan_iterations";

struct CurveLog {
  std::string source;  // the file read
  CurveFormat format = CurveFormat::kAuto;
  std::map<std::string, CurveSeries> metrics;  // by name
  int64_t lines = 0;             // lines or records read
  int64_t malformed = 0;         // lines/records skipped as malformed
  std::vector<std::string> warnings;  // e.g. "truncated at byte 1234: ..."
};

}  // namespace lockstep

#endif  // LOCKSTEP_CURVE_CURVE_LOG_H_
