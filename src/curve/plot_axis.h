// Internal to the curve plots: axis ranges with "nice" ticks, the mapping
// from data to pixels.
// Thread safety: pure functions and values.
#ifndef LOCKSTEP_CURVE_PLOT_AXIS_H_
#define LOCKSTEP_CURVE_PLOT_AXIS_H_

#include <string>
#include <string_view>
#include <vector>

#include "curve/curve_text.h"

namespace lockstep::plot {

using curve_text::Num;
using curve_text::XmlEscape;

// An axis: the domain [lo, hi] (in log10 units when log) and its ticks.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  std::vector<double> ticks;  // in domain units, ascending, within [lo, hi]
};

// A linear axis covering [lo, hi] with about `target` ticks at 1/2/5 x 10^k
// multiples, the domain widened to the outer ticks. A degenerate or empty
// range (lo >= hi, or non-finite) is widened around it (or to [0, 1]).
Axis NiceAxis(double lo, double hi, int target);

// A log10 axis over values whose log10 lie in [lo, hi]: the domain widened
// to whole decades, a tick per decade (thinned to about `target`), plus
// ticks at 2x and 5x when the domain spans at most 2 decades.
Axis LogAxis(double lo, double hi, int target);

// A tick label: "10^k" style values as "1e-3".."1000" for log axes, else
// %.6g, with "-0" as "0".
std::string TickLabel(const Axis& a, double t);

// A panel's pixel box and the mapping of data onto it.
struct Frame {
  double left = 0, top = 0, width = 1, height = 1;
  Axis x, y;
  double X(double v) const;
  double Y(double v) const;  // v in domain units (log10 already applied)
};

}  // namespace lockstep::plot

#endif  // LOCKSTEP_CURVE_PLOT_AXIS_H_
