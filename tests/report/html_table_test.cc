// The HTML report's compact table and its table file: every cell, verdict,
// rank, step and note round-trips exactly (through the page's embedded
// table, a selection of rows, and the table file's JavaScript string); a
// large report keeps its table beside the page, embeds the rows that
// matter, and is written safely.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/report/html_report.h"
#include "report/html_internal.h"
#include "report/html_table_decode.h"
#include "report/json_util.h"
#include "report/synthetic_result.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::DecodedTable;
using testing::MakeSyntheticResult;

DecodedTable EncodeAndDecode(const CompareResult& r,
                             const std::vector<size_t>* rows) {
  rapidjson::StringBuffer buffer;
  internal::JsonWriter w(buffer);
  internal::WriteTable(r, rows, &w);
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(buffer.GetString(),
                                                   buffer.GetSize());
  EXPECT_FALSE(doc.HasParseError()) << "offset " << doc.GetErrorOffset();
  if (doc.HasParseError()) return DecodedTable();
  return testing::DecodeTable(doc);
}

std::string Joined(const std::vector<std::string>& messages) {
  std::string out;
  for (const std::string& m : messages) out += (out.empty() ? "" : "\n") + m;
  return out;
}

// Checks every row of `t` against r.rows[rows[k]] (rows empty: k itself);
// stops at the first mismatch and names it with its neighbours.
void ExpectRowsEqual(const CompareResult& r, const DecodedTable& t,
                     const std::vector<size_t>& rows) {
  ASSERT_EQ(t.n, rows.empty() ? r.rows.size() : rows.size());
  EXPECT_EQ(t.index, rows);
  for (size_t k = 0; k < t.n; ++k) {
    const CompareRow& row = r.rows[rows.empty() ? k : rows[k]];
    for (size_t c = 0; c < t.width; ++c) {
      std::string want = c < row.cells.size()
                             ? internal::SanitizeUtf8(row.cells[c])
                             : std::string();
      ASSERT_EQ(t.cells[c][k], want)
          << "row " << k << " column " << c
          << "; above: " << (k > 0 ? t.cells[c][k - 1] : "-")
          << "; left: " << (c > 0 ? t.cells[c - 1][k] : "-");
    }
    ASSERT_EQ(t.verdict[k], std::to_string(static_cast<int>(row.verdict))) << k;
    ASSERT_EQ(t.rank[k], std::to_string(row.rank)) << k;
    ASSERT_EQ(t.step[k], std::to_string(row.step)) << k;
    ASSERT_EQ(t.notes[k], internal::SanitizeUtf8(Joined(row.messages))) << k;
  }
}

// Cells drawn from a few values each (so that runs, left references, the
// dictionary and shared prefixes meet in every order), ragged rows, empty
// cells, non-ASCII text, invalid UTF-8, escapes and very long names.
CompareResult AwkwardResult(size_t n, unsigned seed) {
  static const std::vector<std::string> kValues = {
      "",
      "a",
      "ab",
      "abc",
      "N/A",
      "torch.float32",
      "[8, 1024]",
      "\xC3\xA9t\xC3\xA9",
      "\xC3\xA9t\xC3\xA0",
      "bad\xFF",
      "q'uo\"te\\back\nline",
      "</script><!--",
      "\xE2\x80\xA8\xE2\x80\xA9",
      "#",
      "~~",
      std::string(120, 'x'),
      std::string(120, 'x') + "y",
      "Functional.linear.0.forward.input.0",
      "Functional.linear.0.forward.output.0",
  };
  std::mt19937 rng(seed);
  CompareResult r = MakeSyntheticResult(n);
  r.columns.resize(6);
  for (size_t i = 0; i < n; ++i) {
    CompareRow& row = r.rows[i];
    std::vector<std::string> cells;
    size_t width = rng() % 8 == 0 ? rng() % 9 : 6;  // ragged: 0..8 cells
    for (size_t c = 0; c < width; ++c) {
      int pick = static_cast<int>(rng() % 4);
      if (pick == 0 && c > 0) {
        cells.push_back(cells[c - 1]);  // as its left neighbour
      } else if (pick == 1 && i > 0 && c < r.rows[i - 1].cells.size()) {
        cells.emplace_back(r.rows[i - 1].cells[c]);  // as the one above
      } else {
        cells.push_back(kValues[rng() % kValues.size()]);
      }
    }
    row.cells = PackedCells(cells);
    row.rank = static_cast<int>(rng() % 3);
    row.step = rng() % 2 ? -1 : static_cast<int>(rng() % 1000);
    row.messages.clear();
    for (size_t m = rng() % 4; m > 0 && m < 3; --m)
      row.messages.push_back(kValues[rng() % kValues.size()]);
  }
  return r;
}

TEST(HtmlTableTest, EveryCellRoundTripsExactly) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    CompareResult r = AwkwardResult(600, seed);
    ASSERT_NO_FATAL_FAILURE(ExpectRowsEqual(r, EncodeAndDecode(r, nullptr), {}))
        << "seed " << seed;
  }
}

TEST(HtmlTableTest, SyntheticAndEmptyTablesRoundTrip) {
  CompareResult r = MakeSyntheticResult(5000);
  ExpectRowsEqual(r, EncodeAndDecode(r, nullptr), {});
  CompareResult empty;
  DecodedTable t = EncodeAndDecode(empty, nullptr);
  EXPECT_EQ(t.n, 0u);
  EXPECT_EQ(t.width, 0u);
}

TEST(HtmlTableTest, SelectedRowsRoundTrip) {
  CompareResult r = AwkwardResult(2000, 7);
  std::vector<size_t> rows;
  for (size_t i = 3; i < r.rows.size(); i += 1 + i % 7) rows.push_back(i);
  ExpectRowsEqual(r, EncodeAndDecode(r, &rows), rows);
}

TEST(HtmlTableTest, TableFileRoundTripsAndNamesItsId) {
  CompareResult r = AwkwardResult(3000, 11);
  r.rows[5].cells.Set(0, "it's a \\'quote\\' \xE2\x80\xA8 and \r\n");
  std::string id;
  std::string js = internal::RenderTableFile(r, &id);
  std::string parsed_id;
  rapidjson::Document doc;
  ASSERT_NO_FATAL_FAILURE(testing::ParseTableFile(js, &parsed_id, &doc));
  EXPECT_EQ(parsed_id, id);
  EXPECT_EQ(id.rfind("3000-", 0), 0u) << id;
  ExpectRowsEqual(r, testing::DecodeTable(doc), {});
  r.rows[9].cells.Set(1, "changed");
  std::string other;
  internal::RenderTableFile(r, &other);
  EXPECT_NE(other, id);  // another table, another id
}

TEST(HtmlTableTest, RepetitiveTablesAreSmall) {
  CompareResult r = MakeSyntheticResult(30000);
  size_t text = 0;
  for (const CompareRow& row : r.rows) {
    for (std::string_view cell : row.cells) text += cell.size() + 1;
  }
  std::string id;
  size_t js = internal::RenderTableFile(r, &id).size();
  std::printf(
      "[ info ] 30000 synthetic rows: %zu bytes of cells as text, %zu "
      "in the table file (%.1f a row)\n",
      text, js, static_cast<double>(js) / 30000);
  EXPECT_LT(js * 5, text * 2);  // 3.1 times smaller when this was written
}

// Long numbers enter the dictionary while they repeat (statistics that two
// agreeing runs repeat row after row), and all-distinct ones, as in runs
// that differ everywhere, are left out of the counting yet round-trip.
TEST(HtmlTableTest, LongNumbersThatRepeatAreInTheDictionary) {
  const std::string a = "-0.00014956590000000068", b = "99.99823221346227%";
  CompareResult r = MakeSyntheticResult(60000);
  for (size_t i = 0; i < r.rows.size(); ++i) {
    for (size_t c : {8, 9, 10}) r.rows[i].cells.Set(c, (i + c) % 2 ? a : b);
  }
  rapidjson::StringBuffer buffer;
  internal::JsonWriter w(buffer);
  internal::WriteTable(r, nullptr, &w);
  rapidjson::Document doc;
  doc.Parse(buffer.GetString(), buffer.GetSize());
  ASSERT_FALSE(doc.HasParseError());
  std::vector<std::string> dict;
  for (const auto& v : doc["dict"].GetArray()) dict.emplace_back(v.GetString());
  EXPECT_NE(std::find(dict.begin(), dict.end(), a), dict.end());
  EXPECT_NE(std::find(dict.begin(), dict.end(), b), dict.end());
  ExpectRowsEqual(r, testing::DecodeTable(doc), {});

  CompareResult d = MakeSyntheticResult(60000);
  char text[64];
  for (size_t i = 0; i < d.rows.size(); ++i) {
    for (size_t c : {8, 9, 10}) {
      std::snprintf(text, sizeof text, "%.17g",
                    1e-4 * static_cast<double>(i * 3 + c));
      d.rows[i].cells.Set(c, text);
    }
  }
  ExpectRowsEqual(d, EncodeAndDecode(d, nullptr), {});
}

HtmlExtras Split() {
  HtmlExtras x;
  x.embed_limit_bytes = 0;
  return x;
}

TEST(HtmlTableTest, LargeReportEmbedsTheRowsThatMatter) {
  CompareResult r = MakeSyntheticResult(30000);
  HtmlReportFiles files = RenderHtmlReportFiles(r, Split(), "report_table.js");
  ASSERT_FALSE(files.table.empty());
  EXPECT_NE(files.page.find("<script src=\"report_table.js\"></script>"),
            std::string::npos);
  rapidjson::Document doc;
  ASSERT_NO_FATAL_FAILURE(testing::ParsePageData(files.page, &doc));
  std::string id;
  rapidjson::Document table;
  ASSERT_NO_FATAL_FAILURE(testing::ParseTableFile(files.table, &id, &table));
  EXPECT_EQ(std::string(doc["table_file"]["id"].GetString()), id);
  EXPECT_EQ(std::string(doc["table_file"]["name"].GetString()),
            "report_table.js");
  EXPECT_EQ(doc["table_file"]["rows"].GetUint64(), 30000u);
  EXPECT_EQ(doc["row_count"].GetUint64(), 30000u);
  // Embedded: the rows around the first divergence and every non-pass row
  // (fewer than the 10,000 kept), exactly.
  std::vector<size_t> want;
  size_t fd = r.first_divergence.row_index;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].verdict != Verdict::kPass || (i + 20 >= fd && i <= fd + 20))
      want.push_back(i);
  }
  ASSERT_LT(want.size(), 10000u);
  ExpectRowsEqual(r, testing::DecodeTable(doc["table"]), want);
  // The plot: sorted rows of the range, the first divergence among them,
  // each with its verdict.
  const rapidjson::Value& plot = doc["plot"];
  ASSERT_TRUE(plot.HasMember("index"));
  size_t points = plot["index"].Size();
  EXPECT_GT(points, 2048u);
  EXPECT_LE(points, 5 * 2048u);
  ASSERT_EQ(plot["verdict"].Size(), points);
  ASSERT_EQ(plot["metrics"]["cosine"].Size(), points);
  bool has_fd = false;
  for (size_t j = 0; j < points; ++j) {
    size_t i = plot["index"][j].GetUint64();
    if (j > 0) {
      ASSERT_LT(plot["index"][j - 1].GetUint64(), i);
    }
    EXPECT_EQ(plot["verdict"][j].GetInt(), static_cast<int>(r.rows[i].verdict));
    has_fd |= i == fd;
  }
  EXPECT_TRUE(has_fd);  // the lowest cosine of its slice
  EXPECT_LT(files.page.size(), 2u << 20) << "the page should stay small";
}

TEST(HtmlTableTest, RowsAroundTheFirstDivergenceAreEmbeddedAfterManyFails) {
  // 30,000 rows that fail before the first divergence (say, unmatched):
  // the page keeps the rows around it, then the first of the others.
  CompareResult r = MakeSyntheticResult(60000);
  for (size_t i = 0; i < 30000; ++i) r.rows[i].verdict = Verdict::kUnmatched;
  testing::SetFirstDivergence(&r);
  r.first_divergence.row_index = 40000;
  HtmlReportFiles files = RenderHtmlReportFiles(r, Split(), "t.js");
  rapidjson::Document doc;
  ASSERT_NO_FATAL_FAILURE(testing::ParsePageData(files.page, &doc));
  DecodedTable t = testing::DecodeTable(doc["table"]);
  ASSERT_EQ(t.n, 10000u);
  std::vector<size_t> want;
  for (size_t i = 0; i < 10000 - 41; ++i) want.push_back(i);
  for (size_t i = 40000 - 20; i <= 40000 + 20; ++i) want.push_back(i);
  EXPECT_EQ(t.index, want);
}

TEST(HtmlTableTest, SmallReportsStayOneFile) {
  CompareResult r = MakeSyntheticResult(3000);
  HtmlReportFiles files = RenderHtmlReportFiles(r, {}, "report_table.js");
  EXPECT_TRUE(files.table.empty());
  EXPECT_EQ(files.page, RenderHtmlReport(r));
  EXPECT_EQ(files.page.find(" src="), std::string::npos);
}

TEST(HtmlTableTest, TableFilePathIsBesideThePage) {
  EXPECT_EQ(HtmlTableFilePath("out/report.html"), "out/report_table.js");
  EXPECT_EQ(HtmlTableFilePath("a.b/page.htm"), "a.b/page_table.js");
  EXPECT_EQ(HtmlTableFilePath("out/page"), "out/page_table.js");
  EXPECT_EQ(HtmlTableFilePath("out/.html"), "out/.html_table.js");
}

TEST(HtmlTableTest, NamesThatNeedEscapingAreEncodedInTheScriptSource) {
  CompareResult r = MakeSyntheticResult(10);
  HtmlReportFiles files = RenderHtmlReportFiles(r, Split(), "a b\"<&.js");
  EXPECT_NE(files.page.find("<script src=\"a%20b%22%3C%26.js\"></script>"),
            std::string::npos);
}

class HtmlTableWriteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lockstep_html_table_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const char* name) { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(HtmlTableWriteTest, WritesBothFilesAndRemovesAStaleTableFile) {
  CompareResult r = MakeSyntheticResult(500);
  auto written = WriteHtmlReport(r, Path("report.html"), Split());
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  EXPECT_EQ(*written, (std::vector<std::string>{Path("report.html"),
                                                Path("report_table.js")}));
  HtmlReportFiles files = RenderHtmlReportFiles(r, Split(), "report_table.js");
  EXPECT_EQ(*ReadFileToString(Path("report.html")), files.page);
  EXPECT_EQ(*ReadFileToString(Path("report_table.js")), files.table);
  // A small report next: one file, and the earlier table file is gone.
  written = WriteHtmlReport(r, Path("report.html"));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->size(), 1u);
  EXPECT_FALSE(fs::exists(Path("report_table.js")));
}

TEST_F(HtmlTableWriteTest, NeverWritesThroughALinkAtTheTableFile) {
  ASSERT_TRUE(WriteFileAtomic(Path("victim"), "keep").ok());
  fs::create_symlink(Path("victim"), Path("report_table.js"));
  CompareResult r = MakeSyntheticResult(50);
  ASSERT_TRUE(WriteHtmlReport(r, Path("report.html"), Split()).ok());
  EXPECT_FALSE(fs::is_symlink(Path("report_table.js")));
  EXPECT_EQ(*ReadFileToString(Path("victim")), "keep");
  // Removing a stale table file removes a link there, not its target.
  fs::remove(Path("report_table.js"));
  fs::create_symlink(Path("victim"), Path("report_table.js"));
  ASSERT_TRUE(WriteHtmlReport(r, Path("report.html")).ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(Path("report_table.js"))));
  EXPECT_EQ(*ReadFileToString(Path("victim")), "keep");
}

}  // namespace
}  // namespace lockstep
