#include "lockstep/curve/curve_json.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

namespace lockstep {
namespace {

CurveLog MakeLog(const std::string& source, std::vector<CurvePoint> loss) {
  CurveLog log;
  log.source = source;
  log.format = CurveFormat::kMegatron;
  log.metrics[kMetricLoss] = {kMetricLoss, std::move(loss)};
  return log;
}

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

TEST(CurveJson, ParsesBackWithFields) {
  auto a = MakeLog("a \"quoted\".log", {{1, 1.0}, {2, 0.0}, {3, 1.0}});
  a.metrics[kMetricLossScale] = {kMetricLossScale, {{1, 4.0}, {2, 2.0}}};
  auto b = MakeLog("b.log", {{1, 1.0}, {2, 0.5}, {4, NAN}});
  auto c = CompareCurves({a, b}, {});
  ASSERT_TRUE(c.ok());
  auto d = Parse(CurveComparisonToJson(*c));
  EXPECT_STREQ(d["metric"].GetString(), "loss");
  EXPECT_EQ(d["common_steps"].GetInt64(), 2);
  EXPECT_DOUBLE_EQ(d["max_abs_diff"].GetDouble(), 0.5);
  EXPECT_EQ(d["first_divergent_step"].GetInt64(), 2);
  EXPECT_STREQ(d["first_divergent_source"].GetString(), "b.log");
  EXPECT_EQ(d["divergent_steps"].GetInt64(), 1);
  EXPECT_EQ(d["inputs"][1]["divergent_steps"].GetInt64(), 1);
  EXPECT_EQ(d["nonfinite_mismatches"].GetInt64(), 0);
  EXPECT_TRUE(d["max_rel_diff"].IsNull());  // inf: reference 0 at step 2
  EXPECT_TRUE(d["diverged"].GetBool());
  EXPECT_EQ(std::string(d["verdict"].GetString()).rfind("FAIL: ", 0), 0u);
  const auto& in = d["inputs"];
  ASSERT_EQ(in.Size(), 2u);
  EXPECT_STREQ(in[0]["source"].GetString(), "a \"quoted\".log");
  EXPECT_STREQ(in[0]["format"].GetString(), "megatron");
  EXPECT_EQ(in[0]["points"].GetInt64(), 3);
  EXPECT_TRUE(in[0]["reference"].GetBool());
  EXPECT_TRUE(in[0]["first_divergent_step"].IsNull());
  EXPECT_EQ(in[0]["loss_scale_drops"][0]["step"].GetInt64(), 2);
  EXPECT_DOUBLE_EQ(in[0]["loss_scale_drops"][0]["to"].GetDouble(), 2.0);
  EXPECT_EQ(in[1]["only_steps"][0].GetInt64(), 4);
  EXPECT_EQ(in[1]["missing_steps"][0].GetInt64(), 3);
  EXPECT_EQ(in[1]["nonfinite_steps"][0].GetInt64(), 4);
  EXPECT_EQ(in[1]["max_abs_diff_step"].GetInt64(), 2);
}

TEST(CurveJson, PassHasNullDivergence) {
  auto a = MakeLog("a", {{1, 1.0}});
  auto c = CompareCurves({a, a}, {});
  auto d = Parse(CurveComparisonToJson(*c));
  EXPECT_TRUE(d["first_divergent_step"].IsNull());
  EXPECT_TRUE(d["first_divergent_source"].IsNull());
  EXPECT_FALSE(d["diverged"].GetBool());
  EXPECT_TRUE(d["passed"].GetBool());
}

TEST(CurveJson, WriteFailsOnBadPath) {
  auto a = MakeLog("a", {{1, 1.0}});
  auto c = CompareCurves({a, a}, {});
  EXPECT_FALSE(WriteCurveJson("/nonexistent-dir/x/curve.json", *c).ok());
}

}  // namespace
}  // namespace lockstep
