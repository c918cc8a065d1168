#include "lockstep/format/replay_result.h"

namespace lockstep {

const char* ReplayVerdictName(ReplayVerdict v) {
  switch (v) {
    case ReplayVerdict::kOk:
      return "ok";
    case ReplayVerdict::kSuspect:
      return "suspect";
    case ReplayVerdict::kNotReplayable:
      return "not replayable";
    case ReplayVerdict::kSkipped:
      return "skipped";
  }
  return "?";
}

}  // namespace lockstep
