// The HTML page of a curve comparison (RenderCurveHtml) and the writer of
// both plot files.
#include <string>

#include "curve/plot_axis.h"
#include "lockstep/core/file.h"
#include "lockstep/curve/curve_plot.h"

namespace lockstep {
namespace {

using plot::Num;
using plot::XmlEscape;

// The plot keeps its size but shrinks to a narrower window, and follows a
// dark system scheme; the SVG's own colours are the light ones (curve.svg).
constexpr const char* kStyle =
    ":root{color-scheme:light dark}"
    "body{font-family:sans-serif;margin:24px;color:#202020;background:#fff}"
    ".plot{position:relative}"
    "svg.lockstep-curve{display:block;max-width:100%;height:auto}"
    ".table{overflow-x:auto}"
    "table{border-collapse:collapse;margin-top:16px}"
    "th,td{border:1px solid #c0c0c0;padding:4px 8px;text-align:right}"
    "th{background:#f0f0f0}td:first-child{text-align:left}"
    ".pass{color:#1a7f37;font-weight:bold}.fail{color:#c00000;"
    "font-weight:bold}"
    "@media (prefers-color-scheme:dark){"
    "body{background:#12161d;color:#dde3ec}th{background:#1b212b}"
    "th,td{border-color:#2c3440}.pass{color:#3ccf8e}.fail{color:#ff6b6b}"
    "svg .bg,svg .legend-box{fill:#1b212b}svg text{fill:#dde3ec}"
    "svg .grid{stroke:#2c3440}svg .frame,svg .legend-box{stroke:#8d97a8}}";

std::string Cell(const std::string& s) {
  return "<td>" + XmlEscape(s) + "</td>";
}

std::string StepOrDash(const std::optional<int64_t>& s) {
  return s ? std::to_string(*s) : "-";
}

std::string Row(const CurveInputResult& r, bool reference) {
  std::string row = "<tr>" + Cell(r.source + (reference ? " (reference)" : ""));
  row += Cell(CurveFormatName(r.format)) + Cell(std::to_string(r.points));
  if (reference) {
    row += Cell("-") + Cell("-") + Cell("-") + Cell("-") + Cell("-");
  } else {
    row += Cell(std::to_string(r.common_steps)) + Cell(Num(r.max_abs_diff)) +
           Cell(Num(r.mean_abs_diff)) + Cell(Num(r.max_rel_diff)) +
           Cell(StepOrDash(r.first_divergent_step));
  }
  row += Cell(std::to_string(r.nonfinite_steps.size())) +
         Cell(std::to_string(r.loss_scale_drops.size())) +
         Cell(std::to_string(r.skipped_total));
  return row + "</tr>\n";
}

std::string Table(const CurveComparison& c) {
  std::string t =
      "<table>\n<tr><th>source</th><th>format</th><th>points</th>"
      "<th>common steps</th><th>max abs diff</th><th>mean abs diff</th>"
      "<th>max rel diff</th><th>first divergent step</th>"
      "<th>nan/inf steps</th><th>loss-scale drops</th>"
      "<th>skipped iterations</th></tr>\n";
  for (size_t k = 0; k < c.inputs.size(); ++k) t += Row(c.inputs[k], k == 0);
  return t + "</table>\n";
}

}  // namespace

std::string RenderCurveHtml(const CurveComparison& c,
                            const CurvePlotOptions& o) {
  std::string title = "lockstep curve: " + c.options.metric;
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
      "<meta charset=\"utf-8\">\n<title>" +
      XmlEscape(title) + "</title>\n<style>" + kStyle +
      "</style>\n</head>\n<body>\n<h1>" + XmlEscape(title) + "</h1>\n";
  page += std::string("<p class=\"") + (c.passed() ? "pass" : "fail") + "\">" +
          XmlEscape(CurveVerdict(c)) + "</p>\n";
  page += "<p>tol_abs " + Num(c.options.tol_abs) + ", tol_rel " +
          Num(c.options.tol_rel) + ", smoothing " + Num(c.options.smoothing) +
          "</p>\n";
  page += "<div class=\"plot\">" + RenderCurveSvg(c, o) + "</div>\n";
  page += "<div class=\"table\">" + Table(c) + "</div>\n";
  page += "<script>\n" + std::string(CurveHoverScript()) + "</script>\n";
  return page + "</body>\n</html>\n";
}

Status WriteCurvePlots(const std::string& dir, const CurveComparison& c,
                       const CurvePlotOptions& o) {
  LOCKSTEP_RETURN_IF_ERROR(CreateDirs(dir));
  LOCKSTEP_RETURN_IF_ERROR(
      WriteFileAtomic(dir + "/curve.svg", RenderCurveSvg(c, o)));
  return WriteFileAtomic(dir + "/curve.html", RenderCurveHtml(c, o));
}

}  // namespace lockstep
