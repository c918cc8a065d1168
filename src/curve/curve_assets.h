// The curve layer's embedded assets: files under src/curve/assets/, made
// into strings at build time (cmake/LockstepEmbedAsset.cmake). Private to
// the curve library.
#ifndef LOCKSTEP_SRC_CURVE_CURVE_ASSETS_H_
#define LOCKSTEP_SRC_CURVE_CURVE_ASSETS_H_

#include <string_view>

namespace lockstep::internal {

// hover.js: the curve plots' hover script (CurveHoverScript, curve_plot.h).
extern const std::string_view kCurveHoverScript;

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_CURVE_CURVE_ASSETS_H_
