// Structure of the HTML report, without a browser: escaping of hostile
// strings, the stable ids, self-containment and the embedded data.
// html_browser_test.cc runs the page in Chromium.
#include "lockstep/report/html_report.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/report/summary_json.h"
#include "report/html_table_decode.h"
#include "report/msprobe_csv_result.h"
#include "report/synthetic_result.h"

namespace lockstep {
namespace {

using testing::MakeSyntheticResult;

constexpr char kOpen[] =
    "<script type=\"application/json\" id=\"report-data\">";
const std::string kHostile =
    "</script><img src=x "
    "onerror=alert(1)><!--<script>\xE2\x80\xA8\xE2\x80\xA9\"'&";

size_t CountOf(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1))
    ++n;
  return n;
}

using testing::DecodedTable;
using testing::ParsePageData;

// The embedded data, parsed, and its table decoded.
DecodedTable ParseData(const std::string& html, rapidjson::Document* doc) {
  ParsePageData(html, doc);
  if (!doc->IsObject() || !doc->HasMember("table")) {
    ADD_FAILURE() << "no table in the data";
    return DecodedTable();
  }
  return testing::DecodeTable((*doc)["table"]);
}

CompareResult HostileResult() {
  CompareResult r = MakeSyntheticResult(30);
  r.target_path = "/tmp/<b>\"run\"&'a'";
  r.rows[4].cells.Set(0, kHostile);
  r.rows[4].messages = {kHostile};
  r.first_divergence.entry = kHostile;
  r.first_divergence.detail = kHostile;
  r.first_divergence.row = kHostile;
  r.gaps[0].entry = kHostile;
  r.warnings = {kHostile};
  r.columns[3] = kHostile;
  return r;
}

TEST(HtmlReportTest, HostileStringsAreEscapedEverywhere) {
  std::string html = RenderHtmlReport(HostileResult());
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<!--"), std::string::npos);
  EXPECT_EQ(html.find("<b>\""), std::string::npos);
  EXPECT_EQ(CountOf(html, "</script>"),
            2u);  // the data and the code, nothing else
  EXPECT_EQ(CountOf(html, "<script"), 2u);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"),
            std::string::npos);
  EXPECT_NE(html.find("/tmp/&lt;b&gt;&quot;run&quot;&amp;&#39;a&#39;"),
            std::string::npos);
  // U+2028/2029 never appear raw inside the data.
  size_t data = html.find(kOpen);
  std::string blob = html.substr(data, html.find("</script>", data) - data);
  EXPECT_EQ(blob.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(blob.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_NE(blob.find("\\u2028\\u2029"), std::string::npos);
}

TEST(HtmlReportTest, HostileStringsRoundTripThroughTheData) {
  rapidjson::Document doc;
  DecodedTable t = ParseData(RenderHtmlReport(HostileResult()), &doc);
  EXPECT_EQ(t.cells[0][4], kHostile);
  EXPECT_EQ(t.notes[4], kHostile);
  EXPECT_EQ(std::string(doc["columns"][3].GetString()), kHostile);
  EXPECT_EQ(
      std::string(doc["summary"]["first_divergence"]["entry"].GetString()),
      kHostile);
  EXPECT_EQ(std::string(doc["summary"]["target"].GetString()),
            "/tmp/<b>\"run\"&'a'");
}

TEST(HtmlReportTest, HasTheStableIds) {
  std::string html = RenderHtmlReport(MakeSyntheticResult(10));
  for (const char* id :
       {"verdict", "summary", "first-divergence", "gaps", "warnings", "plot",
        "filter", "verdict-filter", "rows", "row-count", "report-data"}) {
    EXPECT_EQ(CountOf(html, std::string("id=\"") + id + "\""), 1u) << id;
  }
  EXPECT_NE(html.find("<svg id=\"plot\""), std::string::npos);
  EXPECT_NE(html.find("<tbody id=\"rows\">"), std::string::npos);
}

// The summary card shows two sets of counts: each says whose it is.
TEST(HtmlReportTest, EachSetOfCountsSaysWhoseItIs) {
  std::string html = RenderHtmlReport(MakeSyntheticResult(10));
  size_t card = html.find("id=\"summary\"");
  ASSERT_NE(card, std::string::npos);
  std::string summary = html.substr(card, html.find("</section>", card) - card);
  EXPECT_NE(summary.find("Rows, by lockstep's verdict"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("msprobe's own Result column"), std::string::npos)
      << summary;
}

TEST(HtmlReportTest, IsSelfContained) {
  std::string html = RenderHtmlReport(MakeSyntheticResult(50));
  for (const char* remote :
       {"http:", "https:", "//cdn", "<link", " src=", "@import", "url("}) {
    EXPECT_EQ(html.find(remote), std::string::npos) << remote;
  }
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
}

TEST(HtmlReportTest, DataHoldsEveryRow) {
  CompareResult r = MakeSyntheticResult(1234);
  r.rows[7].max_rel_err = INFINITY;
  rapidjson::Document doc;
  DecodedTable t = ParseData(RenderHtmlReport(r), &doc);
  ASSERT_EQ(t.n, 1234u);
  EXPECT_TRUE(t.index.empty());
  ASSERT_EQ(t.width, r.columns.size());
  ASSERT_EQ(doc["columns"].Size(), r.columns.size());
  EXPECT_EQ(doc["row_count"].GetUint64(), 1234u);
  EXPECT_TRUE(doc["table_file"].IsNull());
  EXPECT_FALSE(doc["plot"].HasMember("index"));  // every row is plotted
  size_t errors = 0;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    EXPECT_EQ(t.cells[0][i], r.rows[i].npu_name());
    for (size_t c = 0; c < r.rows[i].cells.size(); ++c)  // decodes exactly
      ASSERT_EQ(t.cells[c][i], r.rows[i].cells[c]) << i << "," << c;
    EXPECT_EQ(t.verdict[i],
              std::to_string(static_cast<int>(r.rows[i].verdict)));
    errors += t.verdict[i] == "2";
    const auto& cos = doc["plot"]["metrics"]["cosine"][i];
    if (std::isnan(r.rows[i].cosine)) {
      EXPECT_TRUE(cos.IsNull()) << i;
    } else {
      EXPECT_NEAR(cos.GetDouble(), r.rows[i].cosine, 1e-6) << i;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(errors), r.summary.error);
  EXPECT_EQ(std::string(doc["plot"]["metrics"]["max_rel_err"][7].GetString()),
            "inf");
  EXPECT_EQ(doc["first_divergence_row"].GetUint64(),
            r.first_divergence.row_index);
  EXPECT_EQ(doc["first_divergence_rank"].GetInt64(),
            r.rows[r.first_divergence.row_index].rank);
  rapidjson::Document summary;
  summary.Parse(RenderSummaryJson(r).c_str());
  EXPECT_TRUE(doc["summary"] == summary);  // one description of the comparison
}

TEST(HtmlReportTest, FirstDivergenceLinksToItsRow) {
  CompareResult r = MakeSyntheticResult(300);
  std::string html = RenderHtmlReport(r);
  size_t box = html.find("id=\"first-divergence\"");
  ASSERT_NE(box, std::string::npos);
  std::string section = html.substr(box, html.find("</section>", box) - box);
  EXPECT_NE(section.find(r.first_divergence.entry), std::string::npos);
  EXPECT_NE(section.find(">precision<"), std::string::npos);
  std::string number = std::to_string(r.first_divergence.row_index + 1);
  EXPECT_NE(section.find("href=\"#row=" + number + "\""), std::string::npos);
  EXPECT_LT(box,
            html.find("id=\"plot\""));  // at the top, before plot and table
}

TEST(HtmlReportTest, NoDivergenceSaysSo) {
  CompareResult r = MakeSyntheticResult(10);
  r.first_divergence = FirstDivergence();
  r.gaps.clear();
  r.warnings.clear();
  std::string html = RenderHtmlReport(r);
  EXPECT_NE(html.find("No divergence"), std::string::npos);
  EXPECT_EQ(html.find("id=\"fd-link\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"gaps\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"warnings\""), std::string::npos);
  rapidjson::Document doc;
  ParseData(html, &doc);
  EXPECT_TRUE(doc["first_divergence_row"].IsNull());
}

TEST(HtmlReportTest, EmptyAndRaggedResultsRender) {
  CompareResult empty;
  rapidjson::Document doc;
  EXPECT_EQ(ParseData(RenderHtmlReport(empty), &doc).n, 0u);
  CompareResult ragged = MakeSyntheticResult(5);
  ragged.rows[2].cells.Resize(3);
  ragged.first_divergence.row_index = 999;  // out of range: no link, no crash
  std::string html = RenderHtmlReport(ragged);
  EXPECT_EQ(html.find("id=\"fd-link\""), std::string::npos);
  DecodedTable t = ParseData(html, &doc);
  EXPECT_EQ(t.cells[2][2], ragged.rows[2].cells[2]);
  EXPECT_EQ(t.cells[3][2], "");  // the cells the row lacks are empty
  EXPECT_EQ(t.cells[3][1], ragged.rows[1].cells[3]);
  EXPECT_TRUE(doc["first_divergence_row"].IsNull());
}

TEST(HtmlReportTest, InvalidUtf8BecomesReplacementCharacter) {
  CompareResult r = MakeSyntheticResult(5);
  r.rows[1].cells.Set(0, "bad\xFF\xC0name");
  r.baseline_path = "/data/\xE9t\xE9";
  std::string html = RenderHtmlReport(r);
  rapidjson::Document doc;
  EXPECT_EQ(ParseData(html, &doc).cells[0][1],
            "bad\xEF\xBF\xBD\xEF\xBF\xBDname");
  EXPECT_NE(html.find("/data/\xEF\xBF\xBDt\xEF\xBF\xBD"), std::string::npos);
}

TEST(HtmlReportTest, RendersMsprobeStatisticsCompareOfRealTraining) {
  std::string dir =
      std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy/out_summary";
  if (!IsDirectory(dir)) GTEST_SKIP() << dir << " is missing";
  std::string csv;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".csv") csv = e.path().string();
  }
  auto text = ReadFileToString(csv);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  CompareResult r =
      testing::ResultFromMsprobeCsv(*text, CompareMode::kStatistics);
  ASSERT_EQ(
      r.rows.size(),
      2822u);  // quick_start step1 vs step0 (docs/msprobe_reference.md §3.8)
  EXPECT_EQ(r.summary.unmatched, 161);
  rapidjson::Document doc;
  DecodedTable t = ParseData(RenderHtmlReport(r), &doc);
  ASSERT_EQ(t.n, 2822u);
  EXPECT_EQ(t.width, r.columns.size());
  for (size_t i = 0; i < r.rows.size(); ++i) {
    for (size_t c = 0; c < r.rows[i].cells.size(); ++c)  // decodes exactly
      ASSERT_EQ(t.cells[c][i], r.rows[i].cells[c]) << i << "," << c;
  }
  EXPECT_EQ(doc["summary"]["msprobe"]["error"].GetInt64(), 64);
}

// 200,000 entries (400k rows) over four steps in a model of 600 modules:
// the module tree adds per module, not per row, and the page with its
// table file stays far under 50 MB.
TEST(HtmlReportTest, ModuleTreeOfALargePairStaysCompact) {
  constexpr size_t kRows = 400000;
  CompareResult r = MakeSyntheticResult(kRows);
  for (int32_t b = 0; b < 100; ++b) {
    r.modules.push_back({"blocks." + std::to_string(b), "Block", -1});
    int32_t block = static_cast<int32_t>(r.modules.size()) - 1;
    for (const char* leaf : {"attn", "mlp", "norm1", "norm2", "proj"}) {
      r.modules.push_back(
          {r.modules[block].path + "." + leaf, "Linear", block});
    }
  }
  for (size_t i = 0; i < kRows; ++i) {
    r.rows[i].module = static_cast<int32_t>(i / 8 % r.modules.size());
    r.rows[i].step = static_cast<int>(i * 4 / kRows);
  }
  HtmlReportFiles files = RenderHtmlReportFiles(r, {}, "report_table.js");
  ASSERT_FALSE(files.table.empty());
  EXPECT_LT(files.page.size() + files.table.size(), size_t{50} << 20);
  rapidjson::Document doc;
  ParseData(files.page, &doc);
  ASSERT_TRUE(doc["modules"].IsObject());
  EXPECT_EQ(doc["modules"]["path"].Size(), r.modules.size());
  EXPECT_EQ(doc["steps"].Size(), 4u);
  // Whole subtrees: a block holds its own rows and its five leaves'.
  int64_t rows = 0;
  for (const CompareRow& row : r.rows) {
    int32_t m = row.module;
    rows += m == 0 || r.modules[m].parent == 0;
  }
  EXPECT_EQ(doc["modules"]["rows"][0].GetInt64(), rows);
  CompareResult bare = r;
  bare.modules.clear();
  size_t without =
      RenderHtmlReportFiles(bare, {}, "report_table.js").page.size();
  EXPECT_LT(files.page.size() - without, 100 * r.modules.size());
  std::printf(
      "[I] %zu rows, %zu modules: report.html %.2f MB (%.1f KB for the "
      "tree), report_table.js %.1f MB\n",
      kRows, r.modules.size(), files.page.size() / 1e6,
      (files.page.size() - without) / 1e3, files.table.size() / 1e6);
}

TEST(HtmlReportTest, DivergenceModuleAndStackInTheCard) {
  CompareResult r = MakeSyntheticResult(30);
  ASSERT_TRUE(r.first_divergence.found);
  r.modules = {{"blocks", "ModuleList", -1}, {"blocks.0", "Block", 0}};
  CompareRow& row = r.rows[r.first_divergence.row_index];
  row.module = 1;
  r.first_divergence.entry = row.entry;
  r.first_divergence.stack = {
      "File /usr/lib/python3/dist-packages/torch/nn/functional.py, line 1, in "
      "relu, \n return torch.relu(x)",
      "File <b>.py, line 7, in step, \n y = f(x) < 2", "not a frame <i>"};
  std::string html = RenderHtmlReport(r);
  EXPECT_NE(html.find("<p id=\"fd-module\" class=\"fd-module\"><span "
                      "class=\"k\">module</span> <span "
                      "title=\"blocks\">blocks</span><span "
                      "class=\"sep\">&rsaquo;</span><b "
                      "title=\"blocks.0\">0</b> <span "
                      "class=\"cls\">Block</span></p>"),
            std::string::npos);
  // Markup in a frame is text; a frame that is not "File ..." shows as is.
  EXPECT_NE(html.find("<li class=\"frame user\"><span class=\"loc\"><code>"
                      "&lt;b&gt;.py:7</code> in <code class=\"fn\">step</code>"
                      "</span><pre class=\"src\">y = f(x) &lt; 2</pre></li>"),
            std::string::npos);
  EXPECT_NE(html.find("<code>not a frame &lt;i&gt;</code>"), std::string::npos);
  EXPECT_EQ(html.find("<b>.py"), std::string::npos);
  // An entry the target lacks (a missing op) is not in its neighbour's
  // module.
  r.first_divergence.entry = "Torch.inserted.0.forward";
  html = RenderHtmlReport(r);
  EXPECT_EQ(html.find("id=\"fd-module\""), std::string::npos);
  rapidjson::Document doc;
  ParseData(html, &doc);
  EXPECT_EQ(doc["modules"]["fd"].GetInt(), -1);
}

// Two steps: the first divergence in module "a" at step 0, and module "b"
// fails only at step 1 (later steps differ everywhere). The tree's data
// holds the first divergence's step alone beside every step, and the card
// says which it shows first.
TEST(HtmlReportTest, ModuleTreeShowsTheFirstDivergencesStepFirst) {
  CompareResult r = MakeSyntheticResult(40);
  ASSERT_TRUE(r.first_divergence.found);
  r.modules = {{"a", "Linear", -1}, {"b", "Linear", -1}};
  for (size_t i = 0; i < r.rows.size(); ++i) {
    CompareRow& row = r.rows[i];
    row.step = i < 20 ? 0 : 1;
    row.module = i < 20 ? 0 : 1;
    if (i < 20 && i != r.first_divergence.row_index)
      row.verdict = Verdict::kPass;
    if (i >= 20) row.verdict = Verdict::kError;
  }
  ASSERT_LT(r.first_divergence.row_index, 20u);
  r.first_divergence.step = 0;
  std::string html = RenderHtmlReport(r);
  rapidjson::Document doc;
  ParseData(html, &doc);
  const auto& m = doc["modules"];
  ASSERT_TRUE(m.HasMember("step")) << "no step columns";
  EXPECT_EQ(m["step"].GetInt(), 0);
  EXPECT_EQ(m["verdict"][1].GetInt(), static_cast<int>(Verdict::kError));
  EXPECT_EQ(m["step_rows"][1].GetInt64(), 0);  // b has no rows at step 0
  EXPECT_EQ(m["step_rows"][0].GetInt64(), 20);
  EXPECT_EQ(m["step_verdict"][0].GetInt(),
            static_cast<int>(r.rows[r.first_divergence.row_index].verdict));
  EXPECT_NE(html.find("in step 0, the first divergence's"), std::string::npos);
  EXPECT_NE(html.find("id=\"module-all-steps\""), std::string::npos);
  // One step only: nothing to choose.
  for (CompareRow& row : r.rows) row.step = 0;
  html = RenderHtmlReport(r);
  ParseData(html, &doc);
  EXPECT_FALSE(doc["modules"].HasMember("step"));
  EXPECT_EQ(html.find("id=\"module-all-steps\""), std::string::npos);
}

TEST(HtmlReportTest, WriteIsAtomicAndReportsErrors) {
  auto dir = std::filesystem::temp_directory_path() /
             ("lockstep_html_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CompareResult r = MakeSyntheticResult(20);
  std::string path = (dir / "report.html").string();
  auto written = WriteHtmlReport(r, path);
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, std::vector<std::string>{path});  // small: one file
  auto text = ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, RenderHtmlReport(r));
  Status bad =
      WriteHtmlReport(r, (dir / "no" / "such" / "report.html").string())
          .status();
  EXPECT_EQ(bad.code(), StatusCode::kNotFound);
  EXPECT_NE(bad.message().find("report.html"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST(HtmlExtrasTest, CurvesCardIsEmbeddedOnlyWhenGiven) {
  CompareResult r;
  r.mode = CompareMode::kStatistics;
  EXPECT_EQ(RenderHtmlReport(r).find("id=\"curves\""), std::string::npos);
  HtmlExtras x;
  x.curves_svg = "<svg id=\"c\"></svg>";
  x.curves_title = "loss <a vs b>";
  std::string html = RenderHtmlReport(r, x);
  EXPECT_NE(html.find("<section id=\"curves\""), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"c\"></svg>"), std::string::npos);
  EXPECT_NE(html.find("loss &lt;a vs b&gt;"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
