// STUB: replaced by the readers branch.
#ifndef LOCKSTEP_CURVE_READERS_H_
#define LOCKSTEP_CURVE_READERS_H_

#include <string>

#include "lockstep/core/status.h"
#include "lockstep/curve/curve_log.h"

namespace lockstep {

StatusOr<CurveLog> ReadCurveLog(const std::string& path,
                                CurveFormat format = CurveFormat::kAuto);

}  // namespace lockstep

#endif  // LOCKSTEP_CURVE_READERS_H_
