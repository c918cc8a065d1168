// Reading training logs into CurveLog (curve/curve_log.h): HuggingFace
// trainer_state.json, Megatron-LM/DeepSpeed stdout, CSV/TSV with a header,
// JSONL (one object per line) and TensorBoard event files.
//
// What each reader takes:
//   - trainer_state: `log_history` entries; the step is "step" (entries
//     without one are skipped and counted as malformed). Every numeric key
//     is a series under its own name ("loss", "grad_norm", "epoch"); eval
//     entries keep their "eval_" prefix, so train and eval stay apart.
//   - megatron: lines " iteration N/ M | key: value | ..." ("lm loss" ->
//     "loss", "learning rate" -> "learning_rate", "loss scale" ->
//     "loss_scale", "grad norm", "number of skipped/nan iterations"; other
//     keys snake_cased) and " validation loss at iteration N | lm loss
//     value: v | ..." ("eval_loss"). Other lines are ignored; a line that
//     starts like an iteration line but has no step is malformed.
//   - csv/tsv: a header row, then rows (RFC 4180 quoting; the delimiter is
//     sniffed from the header: tab, comma or semicolon). The step column is
//     the first of "step", "global_step", "iteration", "iter", "epoch" (case
//     insensitive), else the first column; its cells must be integers. Every
//     other column with a number in it is a series; empty or text cells are
//     skipped. Rows with a bad step or too many cells are malformed.
//   - jsonl: one JSON object per line (Python JSON, NaN/Infinity allowed),
//     the same step-key rule (else the first key holding an int); numeric
//     top-level keys are series. Lines that are not objects or have no step
//     are malformed. Blank lines are ignored.
//   - tensorboard: TFRecord-framed Event protos (see curve/tfrecord.h);
//     scalars from Summary.Value.simple_value and from one-element
//     DT_FLOAT/DT_DOUBLE tensors. Damage (a torn tail, a bad CRC) ends or
//     skips reading and is reported in `warnings`.
// Names are mapped onto the canonical ones of curve_log.h where they mean
// the same ("lr", "lm loss", "train/loss", "eval/loss", Megatron's
// TensorBoard "lm loss validation" ...); see CanonicalMetricName.
// NaN and ±inf values are kept. Nothing is ever an exception or a crash.
//
// Thread safety: pure functions.
#ifndef LOCKSTEP_CURVE_READERS_H_
#define LOCKSTEP_CURVE_READERS_H_

#include <string>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/curve/curve_log.h"

namespace lockstep {

// Reads the log at `path`. kAuto detects the format (DetectCurveFormat).
// Errors: IoError/NotFound for the file, Corruption naming the file (and
// line) when nothing usable is in it: an empty file, no numeric series, a
// trainer_state.json without log_history, an unreadable event file.
// Lines or records skipped on the way are counted in `malformed`.
StatusOr<CurveLog> ReadCurveLog(const std::string& path,
                                CurveFormat format = CurveFormat::kAuto);

// As ReadCurveLog, on bytes already in memory. `name` is the file name or
// path (used for detection and messages; it becomes CurveLog::source).
StatusOr<CurveLog> ReadCurveLogFromString(
    std::string_view data, std::string_view name,
    CurveFormat format = CurveFormat::kAuto);

// The format of a log from its name and (the start of) its contents:
// TFRecord framing or a name starting "events.out.tfevents" -> tensorboard;
// a JSON object with "log_history" -> trainer_state; ".jsonl"/".ndjson" or
// lines of JSON objects -> jsonl; Megatron iteration lines -> megatron;
// ".csv"/".tsv" or a delimited header -> csv. kAuto when nothing fits.
CurveFormat DetectCurveFormat(std::string_view name, std::string_view data);

// The canonical name of a metric spelled `raw` by some logger: "lr",
// "learning rate", "learning-rate" -> "learning_rate"; "lm loss",
// "train/loss" -> "loss"; "eval/x" -> "eval_x"; "lm loss validation" ->
// "eval_loss"; ... Unknown names come back unchanged.
std::string CanonicalMetricName(std::string_view raw);

}  // namespace lockstep

#endif  // LOCKSTEP_CURVE_READERS_H_
