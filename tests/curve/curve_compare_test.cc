#include "lockstep/curve/curve_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "lockstep/curve/readers.h"

namespace lockstep {
namespace {

CurveLog MakeLog(const std::string& source, std::vector<CurvePoint> loss) {
  CurveLog log;
  log.source = source;
  log.format = CurveFormat::kCsv;
  log.metrics[kMetricLoss] = {kMetricLoss, std::move(loss)};
  return log;
}

std::vector<int64_t> Steps(const std::vector<CurvePoint>& pts) {
  std::vector<int64_t> s;
  for (const auto& p : pts) s.push_back(p.step);
  return s;
}

TEST(AlignSeries, SortsAndLaterDuplicateWins) {
  int64_t dups = -1;
  auto s =
      AlignSeries({{3, 1.0}, {1, 2.0}, {3, 5.0}, {2, 0.5}, {1, 7.0}}, &dups);
  ASSERT_EQ(Steps(s), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(s[0].value, 7.0);
  EXPECT_EQ(s[2].value, 5.0);
  EXPECT_EQ(dups, 2);
  EXPECT_TRUE(AlignSeries({}).empty());
}

// TensorBoard's smoothing, written out plainly in double.
std::vector<double> ReferenceEma(const std::vector<double>& x, double w) {
  std::vector<double> out;
  double last = 0;
  int n = 0;
  for (double v : x) {
    if (!std::isfinite(v)) {
      out.push_back(v);
      continue;
    }
    last = last * w + (1 - w) * v;
    ++n;
    out.push_back(last / (1 - std::pow(w, n)));
  }
  return out;
}

TEST(SmoothEma, MatchesReferenceWithDebiasAndNan) {
  std::vector<double> x = {2.0, 3.0, NAN, 1.0, INFINITY, 4.0, 0.5};
  for (int size : {0, 1, 2, 7}) {
    for (double w : {0.0, 0.3, 0.6, 0.99}) {
      std::vector<CurvePoint> pts;
      std::vector<double> xs(x.begin(), x.begin() + size);
      for (int i = 0; i < size; ++i) pts.push_back({i * 10, xs[i]});
      auto got = SmoothEma(pts, w);
      auto want = ReferenceEma(xs, w);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i].step, pts[i].step);
        if (!std::isfinite(want[i])) {
          EXPECT_EQ(std::isnan(got[i].value), std::isnan(want[i])) << i;
          continue;
        }
        double tol = 4 * 2.2e-16 * std::max(std::fabs(want[i]), 1.0);
        EXPECT_NEAR(got[i].value, want[i], tol) << "w=" << w << " i=" << i;
      }
    }
  }
  // Debiasing: the first smoothed value is the first value itself.
  auto first = SmoothEma({{0, 3.5}}, 0.9);
  EXPECT_NEAR(first[0].value, 3.5, 1e-15);
  // A constant stays constant.
  auto c = SmoothEma({{0, 2.0}, {1, 2.0}, {2, 2.0}}, 0.6);
  EXPECT_NEAR(c[2].value, 2.0, 1e-15);
}

TEST(CompareCurves, AlignsWithGapsAndDuplicates) {
  auto a = MakeLog("a", {{0, 1.0}, {10, 0.9}, {20, 0.8}, {30, 0.7}});
  auto b = MakeLog("b", {{10, 0.95}, {20, 0.8}, {20, 0.85}, {40, 0.6}});
  auto c = CompareCurves({a, b}, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& r = c->inputs[1];
  EXPECT_EQ(r.points, 4);
  EXPECT_EQ(r.duplicate_steps, 1);
  EXPECT_EQ(r.common_steps, 2);
  EXPECT_EQ(c->common_steps, 2);
  EXPECT_EQ(r.only_steps, (std::vector<int64_t>{40}));
  EXPECT_EQ(r.missing_steps, (std::vector<int64_t>{0, 30}));
  ASSERT_EQ(r.diff.size(), 2u);
  EXPECT_NEAR(r.diff[1].value, 0.05, 1e-12);  // later duplicate 0.85 wins
  EXPECT_NEAR(r.max_abs_diff, 0.05, 1e-12);
  EXPECT_NEAR(r.mean_abs_diff, 0.05, 1e-12);
  EXPECT_NEAR(r.max_rel_diff, 0.05 / 0.8, 1e-12);
  EXPECT_EQ(r.max_abs_diff_step, 10);      // first of equal maxima
  EXPECT_EQ(c->first_divergent_step, 10);  // default tolerances: exact
  EXPECT_TRUE(c->inputs[0].diff.empty());
}

TEST(CompareCurves, ACurveThatStopsEarlyFailsUnlessBounded) {
  auto ref = MakeLog("ref", {{1, 3.0}, {2, 2.5}, {3, 2.0}, {4, 1.8}});
  auto crashed = MakeLog("crashed", {{1, 3.0}, {2, 2.5}});
  auto c = CompareCurves({ref, crashed}, {});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->diverged());
  EXPECT_FALSE(c->passed());
  EXPECT_EQ(c->early_stop, "crashed stops at step 2, ref goes on to step 4");
  EXPECT_EQ(CurveVerdict(*c).rfind("FAIL: crashed stops at step 2", 0), 0u)
      << CurveVerdict(*c);
  // The other way round too: the reference is the shorter one.
  c = CompareCurves({crashed, ref}, {});
  EXPECT_FALSE(c->passed());
  CurveCompareOptions until;
  until.until = 2;
  c = CompareCurves({ref, crashed}, until);
  EXPECT_TRUE(c->passed()) << CurveVerdict(*c);
  EXPECT_EQ(c->common_steps, 2);
}

TEST(ReadCurveLog, ALastLineCutMidLineIsNotData) {
  std::string log =
      "step,loss\n"
      "1,3.25\n"
      "2,2.5\n"
      "3,2.4";  // cut from "3,2.4567\n"
  auto l = ReadCurveLogFromString(log, "run.csv");
  ASSERT_TRUE(l.ok()) << l.status().message();
  const auto& loss = l->metrics.at("loss").points;
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_EQ(loss.back().step, 2);
  ASSERT_FALSE(l->warnings.empty());
  EXPECT_NE(l->warnings.back().find("no newline"), std::string::npos);
  auto whole = ReadCurveLogFromString(log + "567\n", "run.csv");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->metrics.at("loss").points.size(), 3u);
}

TEST(CompareCurves, ToleranceRuleNeedsBothToFail) {
  auto a = MakeLog("a", {{1, 10.0}, {2, 10.0}, {3, 10.0}});
  auto b = MakeLog("b", {{1, 10.05}, {2, 10.5}, {3, 12.0}});
  CurveCompareOptions o;
  o.tol_abs = 0.1;
  EXPECT_EQ(CompareCurves({a, b}, o)->first_divergent_step, 2);
  o.tol_rel = 0.1;  // 1.0 absolute at |ref| 10: step 2 passes on rel
  EXPECT_EQ(CompareCurves({a, b}, o)->first_divergent_step, 3);
  o.tol_abs = 2.5;
  EXPECT_FALSE(CompareCurves({a, b}, o)->diverged());
  o = {};
  o.tol_rel = 0.01;
  EXPECT_EQ(CompareCurves({a, b}, o)->first_divergent_step, 2);
  // Equal values never diverge, even with no tolerance.
  EXPECT_FALSE(CompareCurves({a, a}, {})->diverged());
}

TEST(CompareCurves, RelativeDiffAtZeroReferenceIsInf) {
  auto a = MakeLog("a", {{1, 0.0}, {2, 0.0}});
  auto b = MakeLog("b", {{1, 0.0}, {2, 0.5}});
  CurveCompareOptions o;
  o.tol_rel = 1e9;
  auto c = CompareCurves({a, b}, o);
  EXPECT_TRUE(std::isinf(c->max_rel_diff));
  EXPECT_EQ(c->mean_rel_diff, 0);  // only the finite rel (step 1) counts
  EXPECT_EQ(c->first_divergent_step, 2);
}

TEST(CompareCurves, NanOnOneSideDiverges) {
  auto a = MakeLog("a", {{1, 1.0}, {2, NAN}, {3, 1.0}, {4, 1.0}});
  auto b = MakeLog("b", {{1, 1.0}, {2, NAN}, {3, INFINITY}, {4, 1.0}});
  CurveCompareOptions o;
  o.tol_abs = 1;
  auto c = CompareCurves({a, b}, o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->first_divergent_step, 3);  // nan on both sides at 2 is equal
  EXPECT_EQ(c->inputs[0].nonfinite_steps, (std::vector<int64_t>{2}));
  EXPECT_EQ(c->inputs[1].nonfinite_steps, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c->max_abs_diff, 0);  // non-finite diffs are left out
  EXPECT_NE(CurveVerdict(*c).find("nan/inf"), std::string::npos);
}

TEST(CompareCurves, SmoothedComparisonUsesEma) {
  auto a = MakeLog("a", {{1, 1.0}, {2, 1.0}, {3, 1.0}});
  auto b = MakeLog("b", {{1, 1.0}, {2, 1.3}, {3, 0.7}});
  CurveCompareOptions o;
  o.smoothing = 0.5;
  o.tol_abs = 0.2;
  auto c = CompareCurves({a, b}, o);
  ASSERT_EQ(c->inputs[1].smoothed.size(), 3u);
  auto want = ReferenceEma({1.0, 1.3, 0.7}, 0.5);
  EXPECT_NEAR(c->inputs[1].diff[1].value, want[1] - 1.0, 1e-12);
  EXPECT_FALSE(c->diverged());  // raw diff 0.3 would fail; smoothed 0.1 not
}

TEST(CompareCurves, LossScaleDropsAndSkipped) {
  auto a = MakeLog("a", {{1, 1.0}, {2, 1.0}, {3, 1.0}});
  a.metrics[kMetricLossScale] = {
      kMetricLossScale,
      {{1, 65536}, {2, 32768}, {3, 32768}, {4, 65536}, {5, 16384}}};
  a.metrics[kMetricSkipped] = {kMetricSkipped, {{1, 0}, {2, 1}, {5, 3}}};
  auto c = CompareCurves({a, a}, {});
  const auto& r = c->inputs[0];
  ASSERT_EQ(r.loss_scale_drops.size(), 2u);
  EXPECT_EQ(r.loss_scale_drops[0].step, 2);
  EXPECT_EQ(r.loss_scale_drops[0].from, 65536);
  EXPECT_EQ(r.loss_scale_drops[0].to, 32768);
  EXPECT_EQ(r.loss_scale_drops[1].step, 5);
  EXPECT_EQ(r.skipped_steps, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(r.skipped_total, 4);
}

TEST(CompareCurves, ThreeInputsEarliestDivergenceWins) {
  auto a = MakeLog("a", {{1, 1.0}, {2, 1.0}, {3, 1.0}});
  auto b = MakeLog("b", {{1, 1.0}, {2, 1.0}, {3, 2.0}});
  auto c3 = MakeLog("c", {{2, 1.5}, {3, 1.0}});
  auto c = CompareCurves({a, b, c3}, {});
  EXPECT_EQ(c->first_divergent_step, 2);
  EXPECT_EQ(c->first_divergent_input, 2);
  EXPECT_EQ(c->common_steps, 2);
  EXPECT_EQ(c->max_abs_diff, 1.0);
  EXPECT_NE(CurveVerdict(*c).find("FAIL: loss diverges at step 2 in c"),
            std::string::npos);
}

// base, a target that diverges, and a run that crashed early but agreed
// while it ran: the verdict counts the diverging run's own common steps,
// and says that the other stopped.
TEST(CompareCurves, VerdictCountsTheNamedRunAndSaysWhichStopped) {
  std::vector<CurvePoint> base, target, crashed;
  for (int s = 0; s < 200; ++s) {
    double v = 3.0 - 0.01 * s;
    base.push_back({s, v});
    target.push_back({s, s < 100 ? v : v + 0.5});
    if (s <= 150) crashed.push_back({s, v});
  }
  auto c = CompareCurves({MakeLog("base", base), MakeLog("target", target),
                          MakeLog("crashed", crashed)},
                         {});
  ASSERT_TRUE(c.ok());
  std::string v = CurveVerdict(*c);
  EXPECT_EQ(v.rfind("FAIL: loss diverges at step 100 in target", 0), 0u) << v;
  EXPECT_NE(v.find("(100 divergent steps, max abs diff 0.5 over 200 common "
                   "steps); and crashed stops at step 150, base goes on to "
                   "step 199"),
            std::string::npos)
      << v;
  EXPECT_EQ(v.find("would pass"), std::string::npos) << v;  // it would not
}

TEST(CompareCurves, VerdictNamesTolerancesAndSmallestPassing) {
  auto a = MakeLog("a", {{1, 10.0}, {2, 10.0}, {3, 10.0}});
  auto b = MakeLog("b", {{1, 10.0}, {2, 10.5}, {3, 12.0}});
  auto none = CompareCurves({a, b}, {});
  EXPECT_EQ(none->divergent_steps, 2);
  EXPECT_EQ(CurveVerdict(*none),
            "FAIL: loss diverges at step 2 in b: |diff| 0.5 with no "
            "tolerance set (2 divergent steps, max abs diff 2 over 3 common "
            "steps). Note: --tol-abs 2 would pass");
  CurveCompareOptions o;
  o.tol_rel = 0.01;
  std::string v = CurveVerdict(*CompareCurves({a, b}, o));
  EXPECT_NE(v.find(": |diff| 0.5 > tol_rel 0.01 x |ref| ("), std::string::npos)
      << v;
  o.tol_abs = 0.1;
  v = CurveVerdict(*CompareCurves({a, b}, o));
  EXPECT_NE(v.find("|diff| 0.5 > tol_abs 0.1 and > tol_rel 0.01 x |ref|"),
            std::string::npos)
      << v;
  auto n = MakeLog("n", {{1, 10.0}, {2, NAN}, {3, 10.0}});
  auto withnan = CompareCurves({a, n}, {});
  EXPECT_EQ(withnan->nonfinite_mismatches, 1);
  EXPECT_EQ(CurveVerdict(*withnan).find("would pass"), std::string::npos);
}

// Regression: the hint printed --tol-abs 0.1 for a max abs diff of
// 0.10000000000000009 (1.1 - 1.0), a tolerance that fails.
TEST(CompareCurves, SuggestedToleranceReallyPasses) {
  auto a = MakeLog("a", {{1, 1.0}, {2, 1.2}, {3, 2.0}});
  auto b = MakeLog("b", {{1, 1.1}, {2, 1.3}, {3, 2.0 + 1e-7 / 3}});
  auto c = CompareCurves({a, b}, {});
  std::string v = CurveVerdict(*c);
  size_t at = v.find("--tol-abs ");
  ASSERT_NE(at, std::string::npos) << v;
  CurveCompareOptions o;
  o.tol_abs = std::strtod(v.c_str() + at + 10, nullptr);
  EXPECT_FALSE(CompareCurves({a, b}, o)->diverged()) << v;
}

TEST(CompareCurves, DisjointStepsFail) {
  auto a = MakeLog("a", {{1, 1.0}, {2, 1.0}});
  auto b = MakeLog("b", {{3, 1.0}, {4, 1.0}});
  auto c = CompareCurves({a, a, b}, {});
  EXPECT_FALSE(c->diverged());
  EXPECT_EQ(c->disjoint_input(), 2);
  EXPECT_FALSE(c->passed());
  EXPECT_EQ(CurveVerdict(*c),
            "FAIL: loss of b shares no step with the reference a");
  auto empty = MakeLog("e", {});
  EXPECT_FALSE(CompareCurves({a, empty}, {})->passed());
  EXPECT_TRUE(CompareCurves({a, a}, {})->passed());
}

TEST(CompareCurves, VerdictPass) {
  auto a = MakeLog("a", {{1, 1.0}, {2, 1.0}});
  auto c = CompareCurves({a, a}, {});
  EXPECT_EQ(CurveVerdict(*c).rfind("PASS: loss curves agree over 2 common "
                                   "steps (max abs diff 0",
                                   0),
            0u);
}

TEST(CompareCurves, ValidatesOptions) {
  auto a = MakeLog("a", {{1, 1.0}});
  CurveCompareOptions o;
  o.smoothing = 1.0;
  auto s = CompareCurves({a, a}, o).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--smooth 1"), std::string::npos);
  o = {};
  o.smoothing = -0.1;
  EXPECT_FALSE(CompareCurves({a, a}, o).ok());
  o = {};
  o.tol_abs = -1;
  EXPECT_NE(CompareCurves({a, a}, o).status().message().find("--tol-abs -1"),
            std::string::npos);
  o = {};
  o.tol_rel = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(CompareCurves({a, a}, o).status().message().find("--tol-rel nan"),
            std::string::npos);
  EXPECT_EQ(CompareCurves({a}, {}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CompareCurves, UnknownMetricNamesIt) {
  auto a = MakeLog("a.csv", {{1, 1.0}});
  auto b = MakeLog("b.csv", {{1, 1.0}});
  b.metrics[kMetricGradNorm] = {kMetricGradNorm, {{1, 2.0}}};
  CurveCompareOptions o;
  o.metric = "lr";
  auto s = CompareCurves({a, b}, o).status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'lr'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("grad_norm, loss"), std::string::npos);
  o.metric = kMetricGradNorm;  // only b has it
  s = CompareCurves({a, b}, o).status();
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("a.csv: no 'grad_norm' series (it holds loss)"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace lockstep
