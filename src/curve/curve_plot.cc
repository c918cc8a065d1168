#include "lockstep/curve/curve_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "curve/plot_axis.h"

namespace lockstep {
namespace {

using plot::Frame;
using plot::Num;
using plot::XmlEscape;

constexpr double kLeft = 72, kRight = 16, kTop = 36, kGap = 44, kBottom = 40;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};
constexpr const char* kDivergeColor = "#c00000";

const char* Color(size_t k) { return kColors[k % std::size(kColors)]; }

// REQUIRES: the text fits 256 bytes (fmt holds at most two numbers).
void Appendf(std::string* out, const char* fmt, double a, double b) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), fmt, a, b);
  *out += buf;
}

// Values as plotted: log10 on a log axis, where values <= 0 become breaks.
std::vector<CurvePoint> ToDomain(const std::vector<CurvePoint>& pts, bool log) {
  if (!log) return pts;
  std::vector<CurvePoint> out = pts;
  for (auto& p : out) p.value = p.value > 0 ? std::log10(p.value) : NAN;
  return out;
}

void ExtendRange(const std::vector<CurvePoint>& pts, double* lo, double* hi) {
  for (const auto& p : pts) {
    if (!std::isfinite(p.value)) continue;
    *lo = std::min(*lo, p.value);
    *hi = std::max(*hi, p.value);
  }
}

// `v` as an int64_t, saturated at the type's limits (NaN gives 0). An axis
// end may lie past them: the axis is widened to whole ticks, so steps near
// +-2^63 give ends that no int64_t holds (a plain cast is undefined there).
int64_t SaturatedInt64(double v) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (std::isnan(v)) return 0;
  if (v >= kTwo63) return std::numeric_limits<int64_t>::max();
  if (v <= -kTwo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::vector<CurvePoint> Decimated(const Frame& f,
                                  const std::vector<CurvePoint>& pts) {
  return DecimateForPlot(pts, SaturatedInt64(f.x.lo),
                         SaturatedInt64(std::ceil(f.x.hi)),
                         std::max(1, static_cast<int>(f.width)));
}

// The reference is dashed and drawn last, so that it shows where the other
// curves lie on it.
constexpr const char* kReferenceDash = "7,5";

// One decimated polyline; a non-finite point starts a new subpath. `dash`:
// a stroke-dasharray, or nullptr for a solid line.
void AppendPath(const Frame& f, const std::vector<CurvePoint>& pts,
                const char* color, double opacity, double width,
                const char* dash, std::string* out) {
  auto dec = Decimated(f, pts);
  std::string d;
  int run = 0;
  for (size_t i = 0; i <= dec.size(); ++i) {
    bool ok = i < dec.size() && std::isfinite(dec[i].value);
    if (!ok) {
      if (run == 1) d += "l0,0";  // a lone point shows as a dot
      run = 0;
      continue;
    }
    d += run++ == 0 ? "M" : "L";
    Appendf(&d, "%.1f,%.1f", f.X(static_cast<double>(dec[i].step)),
            f.Y(dec[i].value));
  }
  char head[200];
  std::snprintf(head, sizeof(head),
                "<path fill=\"none\" stroke=\"%s\" stroke-opacity=\"%.2f\" "
                "stroke-width=\"%.1f\" stroke-linecap=\"round\" "
                "stroke-linejoin=\"round\"%s%s%s d=\"",
                color, opacity, width, dash ? " stroke-dasharray=\"" : "",
                dash ? dash : "", dash ? "\"" : "");
  *out += head + d + "\"/>\n";
}

// The values behind a curve, for the page's hover script (CurveHoverScript):
// the points drawn (decimated), steps and values comma-separated, a
// non-finite value as an empty item.
void AppendHoverData(const Frame& f, const CurveInputResult& in, size_t k,
                     std::string* out) {
  std::string steps, values;
  for (const CurvePoint& p : Decimated(f, in.curve)) {
    if (!steps.empty()) steps += ',', values += ',';
    steps += std::to_string(p.step);
    if (std::isfinite(p.value)) Appendf(&values, "%.7g", p.value, 0);
  }
  *out += "<g class=\"curve-data\" data-name=\"" + XmlEscape(in.source) +
          "\" data-color=\"" + Color(k) + "\" data-ref=\"" +
          (k == 0 ? "1" : "0") + "\" data-steps=\"" + steps +
          "\" data-values=\"" + values + "\"/>\n";
}

void AppendText(double x, double y, const char* anchor, const std::string& s,
                std::string* out) {
  Appendf(out, "<text x=\"%.1f\" y=\"%.1f\" ", x, y);
  *out += std::string("text-anchor=\"") + anchor + "\">" + XmlEscape(s) +
          "</text>\n";
}

void AppendLine(double x1, double y1, double x2, double y2, const char* style,
                std::string* out) {
  Appendf(out, "<line x1=\"%.1f\" y1=\"%.1f\" ", x1, y1);
  Appendf(out, "x2=\"%.1f\" y2=\"%.1f\" ", x2, y2);
  *out += std::string(style) + "/>\n";
}

// Frame border, grid and tick labels, and the panel's title.
void AppendAxes(const Frame& f, const std::string& title, std::string* out) {
  const char* grid = "class=\"grid\" stroke=\"#e0e0e0\"";
  for (double t : f.y.ticks) {
    double y = f.Y(t);
    AppendLine(f.left, y, f.left + f.width, y, grid, out);
    AppendText(f.left - 6, y + 4, "end", plot::TickLabel(f.y, t), out);
  }
  for (double t : f.x.ticks) {
    double x = f.X(t);
    AppendLine(x, f.top, x, f.top + f.height, grid, out);
    AppendText(x, f.top + f.height + 16, "middle", plot::TickLabel(f.x, t),
               out);
  }
  Appendf(out, "<rect x=\"%.1f\" y=\"%.1f\" ", f.left, f.top);
  Appendf(out, "width=\"%.1f\" height=\"%.1f\" fill=\"none\" ", f.width,
          f.height);
  *out += "class=\"frame\" stroke=\"#606060\"/>\n";
  AppendText(f.left, f.top - 8, "start", title, out);
}

void AppendLegend(const Frame& f, const CurveComparison& c, std::string* out) {
  size_t chars = 0;
  for (const auto& in : c.inputs) chars = std::max(chars, in.source.size());
  double w = std::min(f.width - 20, 44 + 7.0 * (chars + 12));
  double h = 8 + 18.0 * c.inputs.size(), x = f.left + f.width - w - 10;
  Appendf(out, "<rect x=\"%.1f\" y=\"%.1f\" ", x, f.top + 10);
  Appendf(out, "width=\"%.1f\" height=\"%.1f\" ", w, h);
  *out +=
      "class=\"legend-box\" fill=\"#ffffff\" fill-opacity=\"0.85\" "
      "stroke=\"#c0c0c0\"/>\n";
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    double y = f.top + 10 + 16 + 18.0 * k;
    std::string style =
        std::string("stroke=\"") + Color(k) + "\" stroke-width=\"3\"" +
        (k == 0 ? std::string(" stroke-dasharray=\"") + kReferenceDash + "\""
                : "");
    AppendLine(x + 8, y - 4, x + 32, y - 4, style.c_str(), out);
    AppendText(x + 38, y, "start",
               c.inputs[k].source + (k == 0 ? " (reference)" : ""), out);
  }
}

void AppendDivergence(const Frame& main, const Frame& diff,
                      const CurveComparison& c, std::string* out) {
  if (!c.first_divergent_step) return;
  double x = main.X(static_cast<double>(*c.first_divergent_step));
  std::string style = std::string("stroke=\"") + kDivergeColor +
                      "\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"";
  AppendLine(x, main.top, x, main.top + main.height, style.c_str(), out);
  AppendLine(x, diff.top, x, diff.top + diff.height, style.c_str(), out);
  // Above the frame at its right end: inside it, the label ran into the
  // legend (top right) whenever the divergence was late.
  AppendText(
      main.left + main.width, main.top - 8, "end",
      "first divergence: step " + std::to_string(*c.first_divergent_step), out);
}

// A run that stops before the longest one (a crash): a ring at its last
// point, in its colour, and "stops at step N" beside it. A run that agrees
// with the reference lies under the reference's line and would not show
// that it stopped.
void AppendStops(const Frame& main, const CurveComparison& c,
                 std::string* out) {
  if (c.options.until || c.longest_input < 0) return;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    const auto& in = c.inputs[k];
    if (in.curve.empty() || in.curve.back().step >= c.last_step) continue;
    const CurvePoint& p = in.curve.back();
    if (!std::isfinite(p.value) || (c.options.log_y && !(p.value > 0)))
      continue;
    double x = main.X(static_cast<double>(p.step));
    double y = main.Y(c.options.log_y ? std::log10(p.value) : p.value);
    Appendf(out, "<circle class=\"stop\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" ", x,
            y);
    *out += std::string("fill=\"none\" stroke=\"") + Color(k) +
            "\" stroke-width=\"2\"/>\n";
    Appendf(out, "<text x=\"%.1f\" y=\"%.1f\" ", x - 8, y - 10);
    *out += std::string("text-anchor=\"end\" fill=\"") + Color(k) + "\">" +
            XmlEscape(in.source + " stops at step " + std::to_string(p.step)) +
            "</text>\n";
  }
}

// The two panels' frames, with ranges from the data.
void MakeFrames(const CurveComparison& c, const CurvePlotOptions& o,
                Frame* main, Frame* diff) {
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  double d0 = 0, d1 = 0;
  for (const auto& in : c.inputs) {
    if (!in.curve.empty()) {
      x0 = std::min(x0, static_cast<double>(in.curve.front().step));
      x1 = std::max(x1, static_cast<double>(in.curve.back().step));
    }
    ExtendRange(ToDomain(in.curve, c.options.log_y), &y0, &y1);
    ExtendRange(in.diff, &d0, &d1);
  }
  main->left = diff->left = kLeft;
  main->width = diff->width = o.width - kLeft - kRight;
  main->top = kTop;
  main->height = o.main_height;
  diff->top = kTop + o.main_height + kGap;
  diff->height = o.diff_height;
  main->x = diff->x = plot::NiceAxis(x0, x1, 10);
  main->y =
      c.options.log_y ? plot::LogAxis(y0, y1, 8) : plot::NiceAxis(y0, y1, 8);
  diff->y = plot::NiceAxis(d0, d1, 5);
}

void AppendCurves(const Frame& main, const Frame& diff,
                  const CurveComparison& c, std::string* out) {
  bool smooth = c.options.smoothing > 0;
  bool log = c.options.log_y;
  size_t n = c.inputs.size();
  for (size_t j = 1; j <= n; ++j) {
    size_t k = j % n;  // the reference (0) last, on top
    const auto& in = c.inputs[k];
    const char* dash = k == 0 ? kReferenceDash : nullptr;
    AppendPath(main, ToDomain(in.curve, log), Color(k), smooth ? 0.25 : 1.0,
               k == 0 ? 2 : 1.5, smooth ? nullptr : dash, out);
    if (smooth)
      AppendPath(main, ToDomain(in.smoothed, log), Color(k), 1, 2, dash, out);
    if (k > 0) AppendPath(diff, in.diff, Color(k), 1, 1.5, nullptr, out);
  }
  for (size_t k = 0; k < n; ++k) AppendHoverData(main, c.inputs[k], k, out);
  if (diff.y.lo < 0 && diff.y.hi > 0) {
    AppendLine(diff.left, diff.Y(0), diff.left + diff.width, diff.Y(0),
               "stroke=\"#808080\"", out);
  }
}

}  // namespace

std::vector<CurvePoint> DecimateForPlot(const std::vector<CurvePoint>& pts,
                                        int64_t x0, int64_t x1, int columns) {
  if (pts.size() <= 4 * static_cast<size_t>(columns)) return pts;
  std::vector<CurvePoint> out;
  out.reserve(4 * static_cast<size_t>(columns) + 16);
  // In double: x1 - x0 and step - x0 overflow int64_t for far-apart steps.
  double left = static_cast<double>(x0);
  double span = x1 > x0 ? static_cast<double>(x1) - left : 1;
  size_t first = 0, lo = 0, hi = 0, last = 0;
  int64_t col = -1;  // -1: no open column
  auto flush = [&] {
    if (col < 0) return;
    size_t idx[4] = {first, lo, hi, last};
    std::sort(idx, idx + 4);
    for (int i = 0; i < 4; ++i) {
      if (i == 0 || idx[i] != idx[i - 1]) out.push_back(pts[idx[i]]);
    }
    col = -1;
  };
  for (size_t i = 0; i < pts.size(); ++i) {
    double v = pts[i].value;
    if (!std::isfinite(v)) {
      flush();
      if (out.empty() || std::isfinite(out.back().value)) out.push_back(pts[i]);
      continue;
    }
    double at = (static_cast<double>(pts[i].step) - left) / span * columns;
    int64_t c = static_cast<int64_t>(std::clamp(at, 0.0, columns - 1.0));
    if (c != col) {
      flush();
      col = c, first = lo = hi = last = i;
      continue;
    }
    last = i;
    if (v < pts[lo].value) lo = i;
    if (v > pts[hi].value) hi = i;
  }
  flush();
  return out;
}

std::string RenderCurveSvg(const CurveComparison& c,
                           const CurvePlotOptions& o) {
  Frame main, diff;
  MakeFrames(c, o, &main, &diff);
  double height = kTop + o.main_height + kGap + o.diff_height + kBottom;
  std::string out;
  Appendf(&out,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
          "height=\"%.0f\" ",
          o.width, height);
  Appendf(&out, "viewBox=\"0 0 %.0f %.0f\" ", o.width, height);
  // The main panel's frame and step range, for the hover script.
  Appendf(&out, "class=\"lockstep-curve\" data-plot=\"%.1f,%.1f,", main.left,
          main.top);
  Appendf(&out, "%.1f,%.1f,", main.width, main.height);
  Appendf(&out, "%.17g,%.17g,", main.x.lo, main.x.hi);
  Appendf(&out, "%.17g,%.17g,", main.y.lo, main.y.hi);
  out += c.options.log_y ? "1\" " : "0\" ";
  out += "font-family=\"sans-serif\" font-size=\"12\">\n";
  out +=
      "<rect class=\"bg\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  std::string m = c.options.metric;
  AppendAxes(
      main,
      m + (c.options.log_y ? " (log scale)" : "") +
          (c.options.smoothing > 0 ? ", smoothed " + Num(c.options.smoothing)
                                   : ""),
      &out);
  AppendAxes(diff, m + " difference (input - reference)", &out);
  AppendText(diff.left + diff.width / 2, diff.top + diff.height + 34, "middle",
             "step", &out);
  AppendCurves(main, diff, c, &out);
  AppendDivergence(main, diff, c, &out);
  AppendStops(main, c, &out);
  AppendLegend(main, c, &out);
  out += "</svg>\n";
  return out;
}

}  // namespace lockstep
