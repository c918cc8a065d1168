// Plots of a curve comparison, self-contained (no scripts, no external
// styles): an SVG with the metric curves overlaid (one color per input, a
// legend naming each source), a difference panel beneath (target -
// reference for each non-reference input) and the first divergent step
// marked by a vertical line; and an HTML page embedding that SVG with a
// summary table and the verdict line.
//
// Large logs stay small: each curve is decimated per pixel column, keeping
// the first, minimum, maximum and last point of every column (so spikes
// survive), which bounds a curve to about 4 points per pixel column.
// With smoothing on, the smoothed curve is drawn over a faint raw curve.
// With log_y, the metric panel uses a log10 axis and leaves out values
// <= 0; the difference panel is always linear. nan/inf values break a
// curve. All text (sources, metric names) is XML-escaped.
// Thread safety: pure functions.
#ifndef LOCKSTEP_CURVE_CURVE_PLOT_H_
#define LOCKSTEP_CURVE_CURVE_PLOT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/curve/curve_compare.h"

namespace lockstep {

struct CurvePlotOptions {
  int width = 960;        // px, the whole SVG; REQUIRES >= 200
  int main_height = 420;  // px, the metric panel; REQUIRES >= 100
  int diff_height = 180;  // px, the difference panel; REQUIRES >= 50
};

// For a card across a report page (compare's report.html): as wide as the
// page's widest content, lower panels. Pages shrink it to their width.
inline constexpr CurvePlotOptions kWideCurvePlot = {1400, 360, 150};

// Points (sorted by step) reduced for a plot whose x axis maps steps
// [x0, x1] onto `columns` pixel columns: per column the first, min, max and
// last point, in step order. A non-finite value ends the current column
// and is kept once per run of non-finite values (it marks a break).
// Series of at most 4 * columns points are returned unchanged.
// REQUIRES: columns >= 1; x0 <= x1.
std::vector<CurvePoint> DecimateForPlot(const std::vector<CurvePoint>& pts,
                                        int64_t x0, int64_t x1, int columns);

// The SVG document (starts with "<svg", ends with "</svg>\n"). The
// reference (the first input) is dashed and drawn over the others, so that
// it stays visible where a curve lies on it. The <svg> has class
// "lockstep-curve" and data-plot="left,top,width,height,x0,x1,y0,y1,log"
// (the metric panel's frame in SVG units and its axis ranges, y in log10
// when log is 1); each input adds <g class="curve-data" data-name
// data-color data-ref="1|0" data-steps="s,..." data-values="v,...">
// with the points drawn (a non-finite value empty), for CurveHoverScript.
// Elements carry classes a page may restyle (a dark scheme): "bg",
// "grid", "frame", "legend-box", "zero".
std::string RenderCurveSvg(const CurveComparison& c,
                           const CurvePlotOptions& o = {});

// A script (the body of a <script> element) that makes every
// svg.lockstep-curve in the document show, on hover, a vertical rule, a dot
// on each curve and a tip with the step and each input's value there (and
// its difference from the reference). Text goes in as text (no markup from
// the data).
std::string_view CurveHoverScript();

// An HTML5 page: title, the verdict line, the SVG inline and a table with
// one row per input (source, format, points, common steps, max/mean abs
// diff, max rel diff, first divergent step, nan/inf steps, loss-scale
// drops, skipped iterations).
std::string RenderCurveHtml(const CurveComparison& c,
                            const CurvePlotOptions& o = {});

// Writes dir/curve.svg and dir/curve.html atomically, creating `dir`.
// Errors: IoError naming the path.
Status WriteCurvePlots(const std::string& dir, const CurveComparison& c,
                       const CurvePlotOptions& o = {});

}  // namespace lockstep

#endif  // LOCKSTEP_CURVE_CURVE_PLOT_H_
