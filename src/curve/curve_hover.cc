// The hover script of curve plots (curve_plot.h): a vertical rule, a dot on
// each curve and a tip with each input's value at the step under the
// pointer, read from the SVG's data (data-plot on the <svg>, one
// <g class="curve-data"> per input).
#include "curve/curve_assets.h"
#include "lockstep/curve/curve_plot.h"

namespace lockstep {

// The script is src/curve/assets/hover.js, embedded at build time
// (cmake/LockstepEmbedAsset.cmake).
std::string_view CurveHoverScript() { return internal::kCurveHoverScript; }

}  // namespace lockstep
