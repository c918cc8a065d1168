#include "lockstep/curve/curve_log.h"

namespace lockstep {

const char* CurveFormatName(CurveFormat f) {
  switch (f) {
    case CurveFormat::kAuto:
      return "auto";
    case CurveFormat::kTrainerState:
      return "trainer_state";
    case CurveFormat::kMegatron:
      return "megatron";
    case CurveFormat::kCsv:
      return "csv";
    case CurveFormat::kJsonl:
      return "jsonl";
    case CurveFormat::kTensorBoard:
      return "tensorboard";
  }
  return "?";
}

}  // namespace lockstep
