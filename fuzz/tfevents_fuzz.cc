// Fuzzes the TensorBoard event-file reader (TFRecord framing, CRC-32C,
// protobuf decoding): no input may crash it; damage is a warning or an
// error, and a log that reads OK has at least one point.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lockstep/curve/readers.h"
#include "lockstep/curve/tfrecord.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

// Walks the records as the reader does; each step must move forward.
void WalkRecords(std::string_view data) {
  size_t offset = 0;
  for (;;) {
    std::string_view payload;
    size_t next = offset;
    auto r = lockstep::ReadTfRecord(data, offset, &payload, &next);
    if (r != lockstep::TfRecordResult::kOk &&
        r != lockstep::TfRecordResult::kBadDataCrc) {
      return;
    }
    Require(next > offset && next <= data.size());
    offset = next;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  WalkRecords(bytes);
  auto log = lockstep::ReadCurveLogFromString(
      bytes, "events.out.tfevents.fuzz", lockstep::CurveFormat::kTensorBoard);
  if (!log.ok()) return 0;
  size_t points = 0;
  for (const auto& [name, series] : log->metrics)
    points += series.points.size();
  Require(points > 0 && log->malformed <= log->lines);
  return 0;
}
