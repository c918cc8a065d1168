#include "lockstep/curve/curve_plot.h"

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "lockstep/core/file.h"

namespace lockstep {
namespace {

CurveLog MakeLog(const std::string& source, std::vector<CurvePoint> loss) {
  CurveLog log;
  log.source = source;
  log.metrics[kMetricLoss] = {kMetricLoss, std::move(loss)};
  return log;
}

std::vector<CurvePoint> Wave(int n, double shift) {
  std::vector<CurvePoint> pts;
  for (int i = 0; i < n; ++i) {
    pts.push_back({i, 2.0 + std::sin(i * 0.01) + shift * (i > n / 2)});
  }
  return pts;
}

// name (attr="value")* with an optional leading or trailing '/'.
bool TagIsWellFormed(const std::string& tag) {
  size_t i = tag[0] == '/', n = tag.size() - (tag.back() == '/');
  auto name_char = [](char c) {
    return std::isalnum(c) || c == ':' || c == '-';
  };
  size_t start = i;
  while (i < n && name_char(tag[i])) ++i;
  if (i == start) return false;
  while (i < n) {
    if (tag[i] != ' ' && tag[i] != '\n') return false;
    while (i < n && (tag[i] == ' ' || tag[i] == '\n')) ++i;
    if (i == n) break;
    start = i;
    while (i < n && name_char(tag[i])) ++i;
    if (i == start || i + 1 >= n || tag[i] != '=' || tag[i + 1] != '"') {
      return false;
    }
    size_t close = tag.find('"', i + 2);
    if (close == std::string::npos || close >= n) return false;
    if (tag.find_first_of("<>", i + 2) < close) return false;
    i = close + 1;
  }
  return true;
}

// Tags open and close in a balanced way; returns "" or what went wrong. A
// script's text is not markup (it may hold '<'): it is skipped.
std::string CheckBalanced(const std::string& doc) {
  std::vector<std::string> stack;
  for (size_t i = doc.find('<'); i != std::string::npos;
       i = doc.find('<', i + 1)) {
    if (!stack.empty() && stack.back() == "script" &&
        doc.compare(i, 9, "</script>") != 0)
      continue;
    size_t end = doc.find('>', i);
    if (end == std::string::npos)
      return "unterminated tag at " + std::to_string(i);
    std::string tag = doc.substr(i + 1, end - i - 1);
    if (tag.empty() || tag[0] == '!') continue;
    if (!TagIsWellFormed(tag)) return "malformed tag <" + tag + ">";
    bool closing = tag[0] == '/', self = tag.back() == '/';
    std::string name =
        tag.substr(closing, tag.find_first_of(" />", closing) - closing);
    if (name == "meta") continue;  // HTML void element
    if (self) continue;
    if (!closing) {
      stack.push_back(name);
    } else if (stack.empty() || stack.back() != name) {
      return "unbalanced </" + name + "> at " + std::to_string(i);
    } else {
      stack.pop_back();
    }
  }
  return stack.empty() ? "" : "unclosed <" + stack.back() + ">";
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t i = s.find(what); i != std::string::npos;
       i = s.find(what, i + 1)) {
    ++n;
  }
  return n;
}

TEST(CurvePlot, SvgIsBalancedAndEscaped) {
  auto a = MakeLog("runs/<a&b>\"x\".log", Wave(500, 0));
  auto b = MakeLog("b.log", Wave(500, 0.5));
  auto c = CompareCurves({a, b}, {});
  ASSERT_TRUE(c.ok());
  std::string svg = RenderCurveSvg(*c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(CheckBalanced(svg), "");
  EXPECT_NE(svg.find("runs/&lt;a&amp;b&gt;&quot;x&quot;.log"),
            std::string::npos);
  EXPECT_EQ(svg.find("<a&b>"), std::string::npos);
  EXPECT_EQ(Count(svg, "<path"), 3u);  // two curves, one difference
  EXPECT_NE(svg.find("first divergence: step"), std::string::npos);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
}

// A run that stops early is marked where it stops; the divergence label
// sits above the frame, clear of the legend in its top right corner.
TEST(CurvePlot, AStoppedRunIsMarkedAndTheDivergenceLabelIsAboveTheFrame) {
  std::vector<CurvePoint> crashed = Wave(300, 0);
  crashed.resize(150);
  auto c = CompareCurves(
      {MakeLog("ref", Wave(300, 0)), MakeLog("shifted", Wave(300, 0.5)),
       MakeLog("crashed", crashed)},
      {});
  ASSERT_TRUE(c.ok());
  std::string svg = RenderCurveSvg(*c);
  EXPECT_EQ(CheckBalanced(svg), "");
  EXPECT_EQ(Count(svg, "class=\"stop\""), 1u);
  EXPECT_NE(svg.find(">crashed stops at step 149</text>"), std::string::npos);
  size_t label = svg.find(">first divergence: step");
  ASSERT_NE(label, std::string::npos);
  size_t at = svg.rfind("<text x=\"", label);
  double x = 0, y = 0;
  ASSERT_EQ(std::sscanf(svg.c_str() + at, "<text x=\"%lf\" y=\"%lf\"", &x, &y),
            2);
  EXPECT_LT(y, 36.0);  // kTop: above the main frame
  EXPECT_NE(svg.find("text-anchor=\"end\">first divergence"),
            std::string::npos);
  // Runs of one length: no marker.
  auto same = CompareCurves(
      {MakeLog("a", Wave(300, 0)), MakeLog("b", Wave(300, 0.5))}, {});
  EXPECT_EQ(RenderCurveSvg(*same).find("class=\"stop\""), std::string::npos);
}

TEST(CurvePlot, HtmlIsBalancedAndHasTableAndVerdict) {
  auto a = MakeLog("a<script>", Wave(100, 0));
  auto c = CompareCurves({a, a, a}, {});
  std::string html = RenderCurveHtml(*c);
  EXPECT_EQ(CheckBalanced(html), "");
  EXPECT_NE(html.find("PASS: loss curves agree"), std::string::npos);
  EXPECT_EQ(html.find("a<script>"), std::string::npos);
  EXPECT_NE(html.find("a&lt;script&gt;"), std::string::npos);
  // The only script is the hover script, after the plot.
  EXPECT_EQ(Count(html, "<script>"), 1u);
  EXPECT_GT(html.find("<script>"), html.find("</svg>"));
  EXPECT_EQ(Count(html, "<tr>"), 4u);  // header + 3 inputs
  EXPECT_EQ(html.find("first divergence"), std::string::npos);
}

TEST(CurvePlot, SmoothingDrawsFaintRawAndLogSkipsNonPositive) {
  std::vector<CurvePoint> pts = {{0, 1.0},  {1, 0.0}, {2, -1.0},
                                 {3, 10.0}, {4, NAN}, {5, 100.0}};
  auto a = MakeLog("a", pts);
  CurveCompareOptions o;
  o.smoothing = 0.6;
  o.log_y = true;
  auto c = CompareCurves({a, a}, o);
  std::string svg = RenderCurveSvg(*c);
  EXPECT_EQ(CheckBalanced(svg), "");
  EXPECT_EQ(Count(svg, "stroke-opacity=\"0.25\""), 2u);
  EXPECT_EQ(Count(svg, "<path"), 5u);  // 2 raw, 2 smoothed, 1 difference
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_NE(svg.find(">100<"), std::string::npos);  // a decade tick label
}

TEST(DecimateForPlot, KeepsExtremesAndBoundsSize) {
  std::vector<CurvePoint> pts;
  for (int i = 0; i < 100000; ++i) pts.push_back({i, std::sin(i * 0.37)});
  pts[54321].value = 50;
  pts[77777].value = -40;
  pts[90000].value = NAN;
  pts[90001].value = INFINITY;
  auto d = DecimateForPlot(pts, 0, 99999, 800);
  EXPECT_LE(d.size(), 4u * 800 + 4);
  bool hi = false, lo = false;
  int breaks = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    hi |= d[i].step == 54321 && d[i].value == 50;
    lo |= d[i].step == 77777 && d[i].value == -40;
    breaks += !std::isfinite(d[i].value);
    if (i > 0) {
      EXPECT_LT(d[i - 1].step, d[i].step);
    }
  }
  EXPECT_TRUE(hi);
  EXPECT_TRUE(lo);
  EXPECT_EQ(breaks, 1);  // a run of non-finite values is one break
  EXPECT_EQ(d.front().step, 0);
  EXPECT_EQ(d.back().step, 99999);
  // Small series are returned as they are.
  EXPECT_EQ(DecimateForPlot({{1, 1.0}, {2, 2.0}}, 1, 2, 10).size(), 2u);
}

// Steps at the ends of int64_t: the axis widens past +-2^63 and a plain
// double -> int64_t cast of its ends (or step - x0 in int64_t) was undefined
// behaviour (UBSan: float-cast-overflow, signed-integer-overflow).
TEST(CurvePlot, StepsNearInt64LimitsAreDefined) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<CurvePoint> pts;  // enough points to be decimated
  for (int i = 0; i < 5000; ++i) pts.push_back({kMin + i, std::sin(i * 0.1)});
  for (int i = 4999; i >= 0; --i) pts.push_back({kMax - i, std::cos(i * 0.1)});
  auto a = MakeLog("a", pts);
  for (auto& p : pts) p.value += 0.5;
  auto b = MakeLog("b", pts);
  auto c = CompareCurves({a, b}, {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::string svg = RenderCurveSvg(*c);
  EXPECT_EQ(CheckBalanced(svg), "");
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(Count(svg, "<path"), 3u);
}

TEST(DecimateForPlot, FullInt64RangeIsDefined) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::vector<CurvePoint> pts;
  for (int i = 0; i < 100; ++i) pts.push_back({kMin + i, 1.0 * i});
  for (int i = 99; i >= 0; --i) pts.push_back({kMax - i, -1.0 * i});
  auto d = DecimateForPlot(pts, kMin, kMax, 10);
  ASSERT_FALSE(d.empty());
  EXPECT_LE(d.size(), 4u * 10);
  EXPECT_EQ(d.front().step, kMin);
  EXPECT_EQ(d.back().step, kMax);
  // Steps outside [x0, x1] fall into the edge columns.
  EXPECT_EQ(DecimateForPlot(pts, -10, 10, 2).size(), 4u);
}

// Two steps 1024 apart near 2^62: the tick spacing (200) is below half an
// ulp there, and a tick loop of `t += step` never ended (memory grew until
// the process was killed).
TEST(CurvePlot, TicksOfANarrowRangeFarFromZeroEnd) {
  constexpr int64_t kFar = int64_t{1} << 62;
  auto a = MakeLog("a", {{kFar, 1.0}, {kFar + 1024, 2.0}});
  auto c = CompareCurves({a, a}, {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::string svg = RenderCurveSvg(*c);
  EXPECT_EQ(CheckBalanced(svg), "");
  EXPECT_LT(svg.size(), 1u << 16);
}

TEST(CurvePlot, TwoHundredThousandPointsRenderFastAndSmall) {
  auto a = MakeLog("a", Wave(200000, 0));
  auto b = MakeLog("b", Wave(200000, 0.001));
  CurveCompareOptions o;
  o.smoothing = 0.9;
  auto t0 = std::chrono::steady_clock::now();
  auto c = CompareCurves({a, b}, o);
  ASSERT_TRUE(c.ok());
  std::string html = RenderCurveHtml(*c);
  double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_LT(s, 2.0);
  EXPECT_LT(html.size(), 1u << 20) << "SVG not decimated";
  EXPECT_EQ(CheckBalanced(html), "");
}

TEST(CurvePlot, EmptyAndSinglePointSeriesRender) {
  auto a = MakeLog("a", {{5, 1.0}});
  auto e = MakeLog("e", {});
  for (bool log : {false, true}) {
    CurveCompareOptions o;
    o.log_y = log;
    auto c = CompareCurves({a, e, a}, o);
    ASSERT_TRUE(c.ok());
    std::string html = RenderCurveHtml(*c);
    EXPECT_EQ(CheckBalanced(html), "");
    std::string svg = RenderCurveSvg(*c);
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    EXPECT_NE(svg.find("l0,0"), std::string::npos);  // the lone point
    EXPECT_NE(html.find("class=\"fail\""), std::string::npos);
  }
}

TEST(CurvePlot, WritesBothFiles) {
  std::string dir = std::string(LOCKSTEP_BIN_DIR) + "/curve_plot_test_out";
  auto a = MakeLog("a", Wave(10, 0));
  auto c = CompareCurves({a, a}, {});
  ASSERT_TRUE(WriteCurvePlots(dir, *c).ok());
  EXPECT_TRUE(PathExists(dir + "/curve.svg"));
  EXPECT_TRUE(PathExists(dir + "/curve.html"));
  EXPECT_FALSE(WriteCurvePlots("/proc/no/such", *c).ok());
}

}  // namespace
}  // namespace lockstep
