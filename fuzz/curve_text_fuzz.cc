// Fuzzes the text training-log readers (trainer_state.json, Megatron
// stdout, CSV/TSV, JSONL) and format detection: no input may crash them,
// and a log that reads OK has at least one point and no more malformed
// lines than lines.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lockstep/curve/readers.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void Check(std::string_view text, std::string_view name,
           lockstep::CurveFormat format) {
  auto log = lockstep::ReadCurveLogFromString(text, name, format);
  if (!log.ok()) {
    Require(!log.status().message().empty());
    return;
  }
  Require(log->malformed <= log->lines);
  size_t points = 0;
  for (const auto& [name, series] : log->metrics) {
    Require(series.name == name);
    points += series.points.size();
  }
  Require(points > 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using lockstep::CurveFormat;
  Check(text, "fuzz.log", CurveFormat::kAuto);
  Check(text, "fuzz.json", CurveFormat::kTrainerState);
  Check(text, "fuzz.log", CurveFormat::kMegatron);
  Check(text, "fuzz.csv", CurveFormat::kCsv);
  Check(text, "fuzz.tsv", CurveFormat::kCsv);
  Check(text, "fuzz.jsonl", CurveFormat::kJsonl);
  return 0;
}
