// TensorBoard event files: TFRecords (lockstep/curve/tfrecord.h) holding
//   Event   {wall_time = 1 double, step = 2 int64, summary = 5 Summary}
//   Summary {value = 1 repeated Value}
//   Value   {tag = 1 string, simple_value = 2 float, tensor = 8 TensorProto}
//   TensorProto {dtype = 1, tensor_shape = 2, tensor_content = 4,
//                float_val = 5, double_val = 6}
// Scalars come from simple_value (TF1, tensorboardX, PyTorch's
// SummaryWriter) and from one-element float/double tensors (TF2).
#include <string>
#include <utility>
#include <vector>

#include "curve/log_builder.h"
#include "curve/protobuf.h"
#include "lockstep/curve/readers.h"
#include "lockstep/curve/tfrecord.h"

namespace lockstep::curve_internal {
namespace {

constexpr int kDtFloat = 1;
constexpr int kDtDouble = 2;

// Appends the values of a float_val (is_double false) or double_val field,
// packed or not.
bool AddRepeated(const ProtoReader& r, bool is_double,
                 std::vector<double>* out) {
  int fixed_wire = is_double ? kI64 : kI32;
  auto convert = [&](uint64_t bits) {
    return is_double ? DoubleFromBits(bits)
                     : FloatFromBits(static_cast<uint32_t>(bits));
  };
  if (r.wire() == fixed_wire) {
    out->push_back(convert(r.number()));
    return true;
  }
  if (r.wire() != kLen) return false;
  size_t size = is_double ? 8 : 4;
  std::string_view b = r.bytes();
  if (b.size() % size != 0) return false;
  for (size_t i = 0; i < b.size() && out->size() < 2; i += size) {
    uint64_t bits = 0;
    for (size_t k = size; k-- > 0;) bits = (bits << 8) | uint8_t(b[i + k]);
    out->push_back(convert(bits));
  }
  return true;
}

// The value of a one-element DT_FLOAT/DT_DOUBLE tensor.
bool DecodeScalarTensor(std::string_view bytes, double* value) {
  ProtoReader r(bytes);
  int64_t dtype = 0;
  std::string_view content;
  std::vector<double> vals;
  while (r.Next()) {
    if (r.field() == 1 && r.wire() == kVarint) dtype = r.number();
    if (r.field() == 4 && r.wire() == kLen) content = r.bytes();
    if ((r.field() == 5 || r.field() == 6) &&
        !AddRepeated(r, r.field() == 6, &vals)) {
      return false;
    }
  }
  if (!r.ok() || (dtype != kDtFloat && dtype != kDtDouble)) return false;
  size_t size = dtype == kDtDouble ? 8 : 4;
  if (content.size() == size) {
    uint64_t bits = 0;
    for (size_t k = size; k-- > 0;) bits = (bits << 8) | uint8_t(content[k]);
    *value = size == 8 ? DoubleFromBits(bits)
                       : FloatFromBits(static_cast<uint32_t>(bits));
    return true;
  }
  if (!content.empty() || vals.size() != 1) return false;
  *value = vals[0];
  return true;
}

using Scalars = std::vector<std::pair<std::string_view, double>>;

// Collects the scalar of one Summary.Value, if it has one. False if
// malformed.
bool DecodeValue(std::string_view bytes, Scalars* out) {
  ProtoReader r(bytes);
  std::string_view tag;
  double value = 0;
  bool has_value = false;
  while (r.Next()) {
    if (r.field() == 1 && r.wire() == kLen) tag = r.bytes();
    if (r.field() == 2 && r.wire() == kI32) {
      value = FloatFromBits(static_cast<uint32_t>(r.number()));
      has_value = true;
    }
    if (r.field() == 8 && r.wire() == kLen && !has_value) {
      has_value = DecodeScalarTensor(r.bytes(), &value);
    }
  }
  if (!r.ok()) return false;
  if (has_value) out->emplace_back(tag, value);
  return true;
}

// Adds the scalars of one Event; nothing of it if it is malformed.
bool AddEvent(std::string_view bytes, CurveLog* log) {
  ProtoReader r(bytes);
  int64_t step = 0;
  std::vector<std::string_view> summaries;
  while (r.Next()) {
    if (r.field() == 2 && r.wire() == kVarint) step = int64_t(r.number());
    if (r.field() == 5 && r.wire() == kLen) summaries.push_back(r.bytes());
  }
  if (!r.ok()) return false;
  Scalars scalars;
  for (std::string_view summary : summaries) {
    ProtoReader s(summary);
    while (s.Next()) {
      if (s.field() == 1 && s.wire() == kLen &&
          !DecodeValue(s.bytes(), &scalars)) {
        return false;
      }
    }
    if (!s.ok()) return false;
  }
  for (const auto& [tag, value] : scalars) {
    AddPoint(Series(log, CanonicalMetricName(tag)), step, value);
  }
  return true;
}

// Damaged records said one by one; more are summed up in one line (a file
// of 4,000,000 bad records once printed 4,000,000 warnings).
constexpr int64_t kDamageSaid = 5;

// Reports damage in `log->warnings` (a bad data CRC only while `bad_data`,
// the count so far, is below kDamageSaid); true when reading must stop.
bool NoteDamage(TfRecordResult res, size_t offset, int64_t record,
                int64_t bad_data, CurveLog* log) {
  std::string at = std::to_string(offset);
  std::string k = std::to_string(record);
  switch (res) {
    case TfRecordResult::kTruncated:
      log->warnings.push_back(
          StrCat("truncated at byte ", at, " (record ", k, " is cut short)"));
      return true;
    case TfRecordResult::kBadLengthCrc:
      log->warnings.push_back(StrCat("bad CRC at record ", k, " (length, byte ",
                                     at, "); the rest is unreadable"));
      return true;
    case TfRecordResult::kBadDataCrc:
      if (bad_data < kDamageSaid) {
        log->warnings.push_back(
            StrCat("bad CRC at record ", k, " (data, byte ", at, "); skipped"));
      }
      return false;
    default:
      return true;
  }
}

}  // namespace

StatusOr<CurveLog> ParseTfEvents(std::string_view data,
                                 std::string_view subject) {
  CurveLog log;
  log.format = CurveFormat::kTensorBoard;
  size_t offset = 0;
  int64_t bad_data = 0, bad_events = 0;
  for (int64_t record = 0;; ++record) {
    std::string_view payload;
    size_t next = offset;
    TfRecordResult res = ReadTfRecord(data, offset, &payload, &next);
    if (res == TfRecordResult::kEnd) break;
    if (res != TfRecordResult::kOk) {
      bool bad = res == TfRecordResult::kBadDataCrc;
      if (bad) {
        ++log.lines;  // a record, though not a readable one
        ++log.malformed;
      }
      if (NoteDamage(res, offset, record, bad_data, &log)) break;
      bad_data += bad;
      offset = next;
      continue;
    }
    ++log.lines;
    if (!AddEvent(payload, &log)) {
      ++log.malformed;
      if (bad_events++ < kDamageSaid) {
        log.warnings.push_back(StrCat("record ", std::to_string(record),
                                      ": not a valid Event message"));
      }
    }
    offset = next;
  }
  if (bad_data > kDamageSaid) {
    log.warnings.push_back(StrCat("bad CRC in ",
                                  std::to_string(bad_data - kDamageSaid),
                                  " more records (data); skipped (",
                                  std::to_string(bad_data), " in all)"));
  }
  if (bad_events > kDamageSaid) {
    log.warnings.push_back(
        StrCat(std::to_string(bad_events - kDamageSaid),
               " more records are not valid Event messages (",
               std::to_string(bad_events), " in all)"));
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckNotEmpty(log, subject));
  return log;
}

}  // namespace lockstep::curve_internal
