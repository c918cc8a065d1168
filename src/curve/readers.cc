// ReadCurveLog: format detection and dispatch to the per-format parsers.
#include "lockstep/curve/readers.h"

#include "curve/log_builder.h"
#include "lockstep/core/file.h"
#include "lockstep/curve/tfrecord.h"

namespace lockstep {
namespace {

using curve_internal::Trim;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The first record of `data` has a good length CRC.
bool LooksLikeTfRecord(std::string_view data) {
  std::string_view payload;
  size_t next;
  TfRecordResult r = ReadTfRecord(data, 0, &payload, &next);
  return r == TfRecordResult::kOk || r == TfRecordResult::kBadDataCrc ||
         (r == TfRecordResult::kTruncated &&
          data.size() >= kTfRecordHeaderBytes);
}

// Megatron iteration lines in the first 1 MiB.
bool LooksLikeMegatron(std::string_view head) {
  for (std::string_view probe :
       {"\n iteration ", "\niteration ", "] iteration ",
        "validation loss at iteration"}) {
    size_t at = head.find(probe);
    if (at == std::string_view::npos) continue;
    size_t eol = head.find('\n', at + 1);
    if (head.substr(at, eol - at).find('|') != std::string_view::npos) {
      return true;
    }
  }
  return head.substr(0, 10) == " iteration";
}

CurveFormat DetectText(std::string_view name, std::string_view data) {
  std::string_view head = data.substr(0, 1 << 20);
  std::string_view body = Trim(head);
  if (EndsWith(name, ".jsonl") || EndsWith(name, ".ndjson")) {
    return CurveFormat::kJsonl;
  }
  if (EndsWith(name, ".csv") || EndsWith(name, ".tsv")) {
    return CurveFormat::kCsv;
  }
  if (!body.empty() && body[0] == '{') {
    size_t nl = body.find('\n');
    bool one_per_line = nl != std::string_view::npos &&
                        Trim(body.substr(0, nl)).back() == '}' &&
                        Trim(body.substr(nl)).substr(0, 1) == "{";
    if (head.find("\"log_history\"") != std::string_view::npos &&
        !one_per_line) {
      return CurveFormat::kTrainerState;
    }
    return one_per_line ? CurveFormat::kJsonl : CurveFormat::kTrainerState;
  }
  if (LooksLikeMegatron(head)) return CurveFormat::kMegatron;
  std::string_view first = head.substr(0, head.find('\n'));
  if (first.find_first_of(",\t;") != std::string_view::npos) {
    return CurveFormat::kCsv;
  }
  return CurveFormat::kAuto;
}

StatusOr<CurveLog> Parse(std::string_view data, std::string_view name,
                         CurveFormat format) {
  using namespace curve_internal;  // NOLINT: the parsers
  switch (format) {
    case CurveFormat::kTrainerState:
      return ParseTrainerState(data, name);
    case CurveFormat::kMegatron:
      return ParseMegatron(data, name);
    case CurveFormat::kCsv:
      return ParseCsv(data, name, EndsWith(name, ".tsv") ? '\t' : 0);
    case CurveFormat::kJsonl:
      return ParseJsonl(data, name);
    case CurveFormat::kTensorBoard:
      return ParseTfEvents(data, name);
    case CurveFormat::kAuto:
      break;
  }
  return Status::Internal(name, "no format to parse with");
}

}  // namespace

CurveFormat DetectCurveFormat(std::string_view name, std::string_view data) {
  if (BaseName(name).substr(0, 19) == "events.out.tfevents" ||
      LooksLikeTfRecord(data)) {
    return CurveFormat::kTensorBoard;
  }
  return DetectText(name, data);
}

StatusOr<CurveLog> ReadCurveLogFromString(std::string_view data,
                                          std::string_view name,
                                          CurveFormat format) {
  if (Trim(data).empty()) {
    return Status::Corruption(name, "empty file: no log to read");
  }
  if (format == CurveFormat::kAuto) format = DetectCurveFormat(name, data);
  if (format == CurveFormat::kAuto) {
    return Status::InvalidArgument(
        name,
        "not a known training-log format (trainer_state.json, Megatron "
        "stdout, CSV/TSV, JSONL, TensorBoard events). Note: name the format "
        "explicitly");
  }
  // A text log cut mid-line (a run killed while writing, a copy taken
  // during training) ends without a newline: its last line may hold a
  // number cut short ("lm loss: 3.4" of 3.4567), so it is not data.
  std::string cut;
  bool text = format == CurveFormat::kMegatron || format == CurveFormat::kCsv ||
              format == CurveFormat::kJsonl;
  if (text && data.back() != '\n') {
    size_t nl = data.rfind('\n');
    if (nl != std::string_view::npos) {
      cut = std::string(Trim(data.substr(nl + 1)).substr(0, 60));
      data = data.substr(0, nl + 1);
    }
  }
  LOCKSTEP_ASSIGN_OR_RETURN(CurveLog log, Parse(data, name, format));
  if (!cut.empty()) {
    log.warnings.push_back(
        "the last line has no newline (the log was cut mid-line?): "
        "ignored: \"" +
        cut + "\"");
  }
  log.source = std::string(name);
  log.format = format;
  return log;
}

StatusOr<CurveLog> ReadCurveLog(const std::string& path, CurveFormat format) {
  LOCKSTEP_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  StatusOr<CurveLog> log = ReadCurveLogFromString(file->view(), path, format);
  LOCKSTEP_RETURN_IF_ERROR(file->CheckIntact());
  return log;
}

}  // namespace lockstep
