#include "lockstep/report/summary_json.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "lockstep/core/file.h"
#include "report/synthetic_result.h"

namespace lockstep {
namespace {

using testing::MakeSyntheticResult;

void Parse(const std::string& json, rapidjson::Document* doc) {
  doc->Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str(), json.size());
  ASSERT_FALSE(doc->HasParseError()) << json;
}

TEST(SummaryJsonTest, HasCountsPathsAndMode) {
  CompareResult r = MakeSyntheticResult(500);
  std::string json = RenderSummaryJson(r);
  EXPECT_EQ(json.back(), '\n');
  EXPECT_EQ(json.find('\n'), json.size() - 1);  // one line
  rapidjson::Document d;
  Parse(json, &d);
  EXPECT_EQ(d["version"].GetInt(), 1);
  EXPECT_STREQ(d["mode"].GetString(), "tensor");
  EXPECT_EQ(std::string(d["target"].GetString()), r.target_path);
  EXPECT_EQ(std::string(d["baseline"].GetString()), r.baseline_path);
  EXPECT_EQ(d["rows"].GetInt64(), 500);
  EXPECT_EQ(d["pass"].GetInt64(), r.summary.pass);
  EXPECT_EQ(d["warning"].GetInt64(), r.summary.warning);
  EXPECT_EQ(d["error"].GetInt64(), r.summary.error);
  EXPECT_EQ(d["unmatched"].GetInt64(), r.summary.unmatched);
  EXPECT_EQ(d["msprobe"]["pass"].GetInt64(), r.summary.msprobe_pass);
  EXPECT_EQ(d["msprobe"]["warning"].GetInt64(), r.summary.msprobe_warning);
  EXPECT_EQ(d["msprobe"]["error"].GetInt64(), r.summary.msprobe_error);
  EXPECT_STREQ(d["outcome"].GetString(), "fail");
  EXPECT_EQ(std::string(d["verdict_line"].GetString())
                .rfind("FAIL: first divergence at ", 0),
            0u);
}

TEST(SummaryJsonTest, FirstDivergenceGapsAndWarnings) {
  CompareResult r = MakeSyntheticResult(500);
  rapidjson::Document d;
  Parse(RenderSummaryJson(r), &d);
  const auto& fd = d["first_divergence"];
  ASSERT_TRUE(fd.IsObject());
  EXPECT_EQ(std::string(fd["entry"].GetString()), r.first_divergence.entry);
  EXPECT_EQ(fd["rank"].GetInt(), 0);
  EXPECT_EQ(fd["step"].GetInt(), 0);
  EXPECT_STREQ(fd["reason"].GetString(), "precision");
  EXPECT_EQ(std::string(fd["detail"].GetString()), r.first_divergence.detail);
  EXPECT_EQ(std::string(fd["row"].GetString()), r.first_divergence.row);
  EXPECT_EQ(fd["row_index"].GetUint64(), r.first_divergence.row_index);
  EXPECT_DOUBLE_EQ(fd["cosine"].GetDouble(),
                   r.rows[r.first_divergence.row_index].cosine);
  ASSERT_EQ(d["gaps"].Size(), 2u);
  EXPECT_STREQ(d["gaps"][0]["entry"].GetString(),
               "Functional.dropout.0.forward");
  EXPECT_STREQ(d["gaps"][0]["kind"].GetString(), "inserted");
  EXPECT_STREQ(d["gaps"][1]["kind"].GetString(), "missing");
  EXPECT_EQ(d["gaps"][1]["position"].GetUint64(), 40u);
  ASSERT_EQ(d["warnings"].Size(), 1u);
  EXPECT_EQ(std::string(d["warnings"][0].GetString()), r.warnings[0]);
}

TEST(SummaryJsonTest, NoDivergenceIsNull) {
  CompareResult r;
  r.mode = CompareMode::kMd5;
  rapidjson::Document d;
  Parse(RenderSummaryJson(r), &d);
  EXPECT_TRUE(d["first_divergence"].IsNull());
  EXPECT_EQ(d["gaps"].Size(), 0u);
  EXPECT_EQ(d["warnings"].Size(), 0u);
  EXPECT_STREQ(d["mode"].GetString(), "md5");
  EXPECT_STREQ(d["outcome"].GetString(), "pass");
}

TEST(SummaryJsonTest, NanAndInfAreNullAndStringsAreValidUtf8) {
  CompareResult r = MakeSyntheticResult(100);
  CompareRow& row = r.rows[r.first_divergence.row_index];
  row.cosine = NAN;
  row.max_abs_err = INFINITY;
  row.max_rel_err = -INFINITY;
  r.target_path = "/data/\xFF\xFE/run\x01\"\\";
  rapidjson::Document d;
  Parse(RenderSummaryJson(r), &d);
  EXPECT_TRUE(d["first_divergence"]["cosine"].IsNull());
  EXPECT_TRUE(d["first_divergence"]["max_abs_err"].IsNull());
  EXPECT_TRUE(d["first_divergence"]["max_rel_err"].IsNull());
  EXPECT_EQ(std::string(d["target"].GetString()),
            "/data/\xEF\xBF\xBD\xEF\xBF\xBD/run\x01\"\\");
}

TEST(SummaryJsonTest, RowIndexOutOfRangeIsNull) {
  CompareResult r = MakeSyntheticResult(10);
  r.first_divergence.row_index = 10;
  rapidjson::Document d;
  Parse(RenderSummaryJson(r), &d);
  EXPECT_TRUE(d["first_divergence"]["row_index"].IsNull());
  EXPECT_TRUE(d["first_divergence"]["cosine"].IsNull());
}

TEST(SummaryJsonTest, WriteRoundTripsAndReportsErrors) {
  auto dir = std::filesystem::temp_directory_path() /
             ("lockstep_summary_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CompareResult r = MakeSyntheticResult(10);
  std::string path = (dir / "summary.json").string();
  ASSERT_TRUE(WriteSummaryJson(r, path).ok());
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, RenderSummaryJson(r));
  EXPECT_EQ(WriteSummaryJson(r, (dir / "x" / "s.json").string()).code(),
            StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
