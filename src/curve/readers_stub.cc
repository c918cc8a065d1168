// STUB: replaced by the readers branch.
#include "lockstep/curve/readers.h"

namespace lockstep {

StatusOr<CurveLog> ReadCurveLog(const std::string& path, CurveFormat format) {
  return Status::NotSupported(path, "curve log readers are not built yet");
}

}  // namespace lockstep
