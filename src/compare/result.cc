#include "lockstep/compare/result.h"

namespace lockstep {

const char* CompareModeName(CompareMode mode) {
  switch (mode) {
    case CompareMode::kTensor:
      return "tensor";
    case CompareMode::kStatistics:
      return "statistics";
    case CompareMode::kMd5:
      return "md5";
  }
  return "?";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kWarning:
      return "warning";
    case Verdict::kError:
      return "error";
    case Verdict::kUnmatched:
      return "unmatched";
  }
  return "?";
}

const char* DivergenceReasonName(DivergenceReason r) {
  switch (r) {
    case DivergenceReason::kNone:
      return "none";
    case DivergenceReason::kPrecision:
      return "precision";
    case DivergenceReason::kOverflow:
      return "overflow";
    case DivergenceReason::kNan:
      return "nan";
    case DivergenceReason::kShape:
      return "shape";
    case DivergenceReason::kMissing:
      return "missing";
    case DivergenceReason::kDtype:
      return "dtype";
    case DivergenceReason::kArgument:
      return "argument";
    case DivergenceReason::kInput:
      return "input";
  }
  return "?";
}

}  // namespace lockstep
