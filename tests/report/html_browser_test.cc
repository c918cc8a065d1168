// The HTML report in a real browser: headless Chromium loads a report of
// 2,500 synthetic rows (and a deliberately broken copy), and the DOM it dumps
// after the script ran is checked, together with Chromium's console log. The
// same rows with the table in a table file are loaded with that file, without
// it and with one from another report. Skipped when /usr/bin/chromium is
// missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/report/html_report.h"
#include "report/chromium_page.h"
#include "report/synthetic_result.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::ConsoleMessages;
using testing::CountOf;
using testing::CountVerdict;
using testing::Describe;
using testing::Inside;
using testing::kChromium;
using testing::PageRun;
using testing::RowIndices;
using testing::TextOf;

constexpr int kRows = 2500;

enum Page {
  kPlain,
  kErrors,
  kConvByCosine,
  kGoToRow,
  kBroken,
  kSplit,         // the table in split/report_table.js
  kSplitMissing,  // ... which is missing
  kSplitStale,    // ... which belongs to another report
  kPageCount
};
constexpr int kGoTo = 1800;  // 1-based row number, on page 9 of 200-row pages

// The page each test looks at: only the pages of the tests selected to run
// are loaded (ctest runs each test in its own process).
Page PageOf(std::string_view test) {
  if (test == "VerdictInUrlFiltersRows") return kErrors;
  if (test == "NameFilterAndNumericSortFromUrl") return kConvByCosine;
  if (test == "RowInUrlOpensItsPage") return kGoToRow;
  if (test == "DetectsScriptErrorsInABrokenPage") return kBroken;
  if (test == "TableFromTheTableFile") return kSplit;
  if (test == "MissingTableFileShowsTheEmbeddedRowsAndSaysSo") {
    return kSplitMissing;
  }
  if (test == "TableFileOfAnotherReportIsNotUsed") return kSplitStale;
  return kPlain;
}

std::vector<bool> PagesToLoad() {
  std::vector<bool> load(kPageCount, false);
  const ::testing::TestSuite* suite =
      ::testing::UnitTest::GetInstance()->current_test_suite();
  for (int i = 0; suite != nullptr && i < suite->total_test_count(); ++i) {
    const ::testing::TestInfo* test = suite->GetTestInfo(i);
    if (test->should_run()) load[PageOf(test->name())] = true;
  }
  return load;
}

class HtmlBrowserTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (access(kChromium, X_OK) != 0) return;
    dir_ = fs::temp_directory_path() /
           ("lockstep_browser_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    result_ = new CompareResult(testing::MakeSyntheticResult(kRows));
    ASSERT_NO_FATAL_FAILURE(WritePages(dir_, *result_));
    runs_ = new std::vector<PageRun>(PageRuns(dir_));
    std::vector<bool> load = PagesToLoad();
    for (int n = 0; n < kPageCount; ++n) {
      if (load[n])
        testing::Start(dir_, n,
                       &(*runs_)[n]);  // all at once: they run in parallel
    }
    testing::WaitAll(dir_, runs_, testing::kPageDeadline);
  }

  // report.html and a deliberately broken copy, to prove that errors are
  // detected.
  static void WritePages(const fs::path& dir, const CompareResult& r) {
    std::string html = RenderHtmlReport(r);
    ASSERT_TRUE(WriteFileAtomic((dir / "report.html").string(), html).ok());
    size_t init = html.find("function init() {");
    ASSERT_NE(init, std::string::npos);
    html.insert(
        init + 17,
        "console.error('deliberate console error'); undefinedFunction();");
    ASSERT_TRUE(WriteFileAtomic((dir / "broken.html").string(), html).ok());
    // The same rows with the table in a table file, in three directories:
    // with it, without it, and with the table file of another report.
    HtmlExtras split;
    split.embed_limit_bytes = 0;
    for (const char* sub : {"split", "missing", "stale"}) {
      fs::create_directories(dir / sub);
      auto written =
          WriteHtmlReport(r, (dir / sub / "report.html").string(), split);
      ASSERT_TRUE(written.ok()) << written.status().ToString();
      ASSERT_EQ(written->size(), 2u);
    }
    fs::remove(dir / "missing" / "report_table.js");
    CompareResult other = testing::MakeSyntheticResult(kRows + 1);
    ASSERT_TRUE(
        WriteHtmlReport(other, (dir / "other.html").string(), split).ok());
    fs::rename(dir / "other_table.js", dir / "stale" / "report_table.js");
  }

  static std::vector<PageRun> PageRuns(const fs::path& dir) {
    std::string base = "file://" + (dir / "report.html").string();
    std::vector<PageRun> runs(kPageCount);
    runs[kPlain].url = base;
    runs[kErrors].url = base + "#verdict=error";
    runs[kConvByCosine].url = base + "#filter=CONV2D.1&sort=Cosine&dir=desc";
    runs[kGoToRow].url = base + "#row=" + std::to_string(kGoTo);
    runs[kBroken].url = "file://" + (dir / "broken.html").string();
    runs[kSplit].url = "file://" + (dir / "split" / "report.html").string();
    runs[kSplitMissing].url =
        "file://" + (dir / "missing" / "report.html").string();
    runs[kSplitStale].url =
        "file://" + (dir / "stale" / "report.html").string();
    return runs;
  }

  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
    delete runs_;
    delete result_;
  }

  void SetUp() override {
    if (access(kChromium, X_OK) != 0)
      GTEST_SKIP() << kChromium << " is missing: install chromium";
  }

  // The run's DOM, asserting that the page rendered without console output
  // (but a line about the failed load of a missing table file, when
  // `missing_file`: Chromium may log one).
  static const PageRun& Loaded(Page page, bool missing_file = false) {
    const PageRun& run = (*runs_)[page];
    EXPECT_NE(run.dom.find("data-ready=\"1\""), std::string::npos)
        << Describe(run);
    std::vector<std::string> console = ConsoleMessages(run.log);
    if (missing_file) {
      console.erase(std::remove_if(console.begin(), console.end(),
                                   [](const std::string& line) {
                                     return line.find("report_table.js") !=
                                                std::string::npos &&
                                            line.find("Uncaught") ==
                                                std::string::npos;
                                   }),
                    console.end());
    }
    EXPECT_TRUE(console.empty())
        << console.size() << " console messages, first: " << console[0];
    return run;
  }

  // Whether the DOM's table note is shown (the element lacks `hidden`).
  static bool NoteShown(const std::string& dom) {
    size_t at = dom.find("id=\"table-note\"");
    if (at == std::string::npos) return false;
    std::string tag = dom.substr(at, dom.find('>', at) - at);
    return tag.find("hidden") == std::string::npos;
  }

  static inline fs::path dir_;
  static inline CompareResult* result_ = nullptr;
  static inline std::vector<PageRun>* runs_ = nullptr;
};

TEST_F(HtmlBrowserTest, RendersTableSummaryAndFirstDivergence) {
  const std::string& dom = Loaded(kPlain).dom;
  EXPECT_EQ(TextOf(dom, "row-count"), std::to_string(kRows));
  EXPECT_EQ(TextOf(dom, "range"), "1\u2013200");
  std::vector<int> rows = RowIndices(dom);
  ASSERT_EQ(rows.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(rows[i], i);
  std::string fd = Inside(dom, "first-divergence", "</section>");
  EXPECT_NE(fd.find(result_->first_divergence.entry), std::string::npos) << fd;
  EXPECT_NE(Inside(dom, "summary", "</section>")
                .find(std::to_string(result_->summary.error)),
            std::string::npos);
  EXPECT_NE(dom.find("<tr class=\"v-unmatched\""), std::string::npos);
  // Page 1 is all before the first divergence (row ~1000, one rank): its
  // warnings are shown as walked past, not as causes.
  EXPECT_NE(dom.find("<tr class=\"v-warning pre-fd\""), std::string::npos);
  EXPECT_EQ(dom.find("<tr class=\"v-warning\""), std::string::npos);
}

TEST_F(HtmlBrowserTest, PlotHasPointsAndMarksTheFirstDivergence) {
  const std::string& dom = Loaded(kPlain).dom;
  std::string svg = Inside(dom, "plot", "</svg>");
  EXPECT_GT(CountOf(svg, "<circle"), 300u) << svg.substr(0, 500);
  EXPECT_GT(CountOf(svg, "<circle class=\"v-error\""), 10u);
  EXPECT_EQ(CountOf(svg, "class=\"fdline\""), 1u);
  EXPECT_NE(svg.find("first divergence #" +
                     std::to_string(result_->first_divergence.row_index + 1)),
            std::string::npos);
  EXPECT_NE(svg.find("<path class=\"line\" d=\"M"), std::string::npos);
  EXPECT_EQ(TextOf(dom, "plot-title"), "Cosine along the op sequence");
}

TEST_F(HtmlBrowserTest, VerdictInUrlFiltersRows) {
  const std::string& dom = Loaded(kErrors).dom;
  size_t errors = CountVerdict(*result_, Verdict::kError);
  ASSERT_GT(errors, 0u);
  EXPECT_EQ(TextOf(dom, "row-count"), std::to_string(errors));
  std::vector<int> rows = RowIndices(dom);
  EXPECT_EQ(rows.size(), std::min<size_t>(errors, 200));
  for (int i : rows) EXPECT_EQ(result_->rows[i].verdict, Verdict::kError) << i;
  EXPECT_EQ(CountOf(Inside(dom, "rows", "</tbody>"), "<tr class=\"v-error"),
            rows.size());
}

TEST_F(HtmlBrowserTest, NameFilterAndNumericSortFromUrl) {
  const std::string& dom = Loaded(kConvByCosine).dom;
  // Case-insensitive substring; cosine descending, numerically, with the
  // unmatched rows' "N/A" after every number; ties in row order.
  std::vector<int> numbers, strings;
  for (int i = 0; i < kRows; ++i) {
    const CompareRow& row = result_->rows[i];
    if (row.npu_name().find("conv2d.1") == std::string::npos) continue;
    (row.cells[8] == "N/A" ? strings : numbers).push_back(i);
  }
  ASSERT_FALSE(strings.empty());
  ASSERT_LE(numbers.size() + strings.size(), 200u);  // one page
  std::stable_sort(numbers.begin(), numbers.end(), [](int a, int b) {
    return std::stod(std::string(result_->rows[a].cells[8])) >
           std::stod(std::string(result_->rows[b].cells[8]));
  });
  std::vector<int> want = numbers;
  want.insert(want.end(), strings.begin(), strings.end());
  EXPECT_EQ(TextOf(dom, "row-count"), std::to_string(want.size()));
  EXPECT_EQ(RowIndices(dom), want);
  EXPECT_NE(dom.find("class=\"sorted desc"), std::string::npos);
}

TEST_F(HtmlBrowserTest, RowInUrlOpensItsPage) {
  const std::string& dom = Loaded(kGoToRow).dom;
  EXPECT_EQ(TextOf(dom, "range"), "1601\u20131800");
  const std::regex selected(
      R"re(<tr class="v-\w+ (fd )?selected[^"]*" data-i="(\d+)")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(dom, m, selected));
  EXPECT_EQ(m[2], std::to_string(kGoTo - 1));
  // After the first divergence, a warning is coloured as one.
  std::string rows = Inside(dom, "rows", "</tbody>");
  EXPECT_NE(rows.find("<tr class=\"v-warning\""), std::string::npos);
  EXPECT_EQ(rows.find("pre-fd"), std::string::npos);
}

TEST_F(HtmlBrowserTest, DetectsScriptErrorsInABrokenPage) {
  const PageRun& run = (*runs_)[kBroken];
  ASSERT_NE(run.dom.find("id=\"rows\""), std::string::npos) << Describe(run);
  EXPECT_EQ(run.dom.find("data-ready=\"1\""), std::string::npos);
  std::vector<std::string> console = ConsoleMessages(run.log);
  ASSERT_EQ(console.size(), 2u) << Describe(run);
  EXPECT_NE(console[0].find("deliberate console error"), std::string::npos)
      << console[0];
  EXPECT_NE(console[1].find("Uncaught ReferenceError: undefinedFunction"),
            std::string::npos)
      << console[1];
}

TEST_F(HtmlBrowserTest, TableFromTheTableFile) {
  const std::string& dom = Loaded(kSplit).dom;
  EXPECT_EQ(TextOf(dom, "row-count"), std::to_string(kRows));
  std::vector<int> rows = RowIndices(dom);
  ASSERT_EQ(rows.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(rows[i], i);
  EXPECT_FALSE(NoteShown(dom)) << Inside(dom, "table-note", "</p>");
  std::string svg = Inside(dom, "plot", "</svg>");
  EXPECT_GT(CountOf(svg, "<circle class=\"v-error\""), 10u);
  EXPECT_NE(svg.find("first divergence #" +
                     std::to_string(result_->first_divergence.row_index + 1)),
            std::string::npos);
}

// Every row that is not a pass (there are fewer than 10,000) and those
// around the first divergence, in order.
std::vector<int> EmbeddedRows(const CompareResult& r) {
  std::vector<int> out;
  int fd = static_cast<int>(r.first_divergence.row_index);
  for (int i = 0; i < static_cast<int>(r.rows.size()); ++i) {
    if (r.rows[i].verdict != Verdict::kPass || std::abs(i - fd) <= 20)
      out.push_back(i);
  }
  return out;
}

TEST_F(HtmlBrowserTest, MissingTableFileShowsTheEmbeddedRowsAndSaysSo) {
  const std::string& dom = Loaded(kSplitMissing, true).dom;
  ASSERT_TRUE(NoteShown(dom));
  std::string note = TextOf(dom, "table-note");
  EXPECT_NE(note.find("report_table.js"), std::string::npos) << note;
  EXPECT_NE(note.find("is missing"), std::string::npos) << note;
  std::vector<int> want = EmbeddedRows(*result_);
  EXPECT_EQ(TextOf(dom, "row-count"), std::to_string(want.size()));
  want.resize(std::min<size_t>(want.size(), 200));
  EXPECT_EQ(RowIndices(dom), want);
  std::string fd = Inside(dom, "first-divergence", "</section>");
  EXPECT_NE(fd.find(result_->first_divergence.entry), std::string::npos) << fd;
  EXPECT_NE(
      dom.find("class=\"v-error fd\" data-i=\"" +
               std::to_string(result_->first_divergence.row_index) + "\""),
      std::string::npos);
  std::string svg = Inside(dom, "plot", "</svg>");
  EXPECT_GT(CountOf(svg, "<circle class=\"v-error\""), 10u);
  EXPECT_EQ(CountOf(svg, "class=\"fdline\""), 1u);
}

TEST_F(HtmlBrowserTest, TableFileOfAnotherReportIsNotUsed) {
  const std::string& dom = Loaded(kSplitStale).dom;
  ASSERT_TRUE(NoteShown(dom));
  std::string note = TextOf(dom, "table-note");
  EXPECT_NE(note.find("belongs to another report"), std::string::npos) << note;
  EXPECT_EQ(TextOf(dom, "row-count"),
            std::to_string(EmbeddedRows(*result_).size()));
}

}  // namespace
}  // namespace lockstep
