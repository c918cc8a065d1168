// report.html at 600,000 rows in headless Chromium: the page and its table
// file are written as `lockstep compare` writes them, the page loads the
// table file, counts every row and shows the first divergence. Prints the
// sizes and how long the load took (not asserted tightly: the machine is
// shared). Skipped when /usr/bin/chromium is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "lockstep/report/html_report.h"
#include "report/chromium_page.h"
#include "report/synthetic_result.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::PageRun;

constexpr size_t kRows = 600000;

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

TEST(HtmlBrowserLargeTest, SixHundredThousandRowsLoadFromTheTableFile) {
  if (access(testing::kChromium, X_OK) != 0)
    GTEST_SKIP() << testing::kChromium << " is missing: install chromium";
  fs::path dir = fs::temp_directory_path() /
                 ("lockstep_browser_large_" + std::to_string(getpid()));
  fs::create_directories(dir);
  auto t0 = std::chrono::steady_clock::now();
  CompareResult r = testing::MakeSyntheticResult(kRows);
  double made = SecondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  std::string page = (dir / "report.html").string();
  auto written = WriteHtmlReport(r, page);
  double write = SecondsSince(t0);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  ASSERT_EQ(written->size(), 2u) << "the table should be in a table file";
  uintmax_t page_bytes = fs::file_size(page);
  uintmax_t table_bytes = fs::file_size((*written)[1]);
  EXPECT_LT(page_bytes, 8u << 20);  // the page stays small

  std::vector<PageRun> runs(1);
  runs[0].url = "file://" + page;
  testing::Start(dir, 0, &runs[0]);
  testing::WaitAll(dir, &runs, testing::kPageDeadline);
  const PageRun& run = runs[0];
  size_t at = run.dom.find("data-ready-ms=\"");
  std::string ready_ms =
      at == std::string::npos
          ? "?"
          : run.dom.substr(at + 15, run.dom.find('"', at + 15) - at - 15);
  std::printf(
      "[ info ] %zu rows: made in %.1f s, written in %.1f s; report.html %.2f "
      "MB, %s %.2f MB; Chromium: ready %s ms after navigation, exited after "
      "%.1f s\n",
      kRows, made, write, static_cast<double>(page_bytes) / 1e6,
      fs::path((*written)[1]).filename().c_str(),
      static_cast<double>(table_bytes) / 1e6, ready_ms.c_str(), run.seconds);

  EXPECT_NE(run.dom.find("data-ready=\"1\""), std::string::npos)
      << testing::Describe(run);
  std::vector<std::string> console = testing::ConsoleMessages(run.log);
  EXPECT_TRUE(console.empty())
      << console.size() << " console messages, first: " << console[0];
  EXPECT_EQ(testing::TextOf(run.dom, "row-count"), std::to_string(kRows));
  std::vector<int> rows = testing::RowIndices(run.dom);
  ASSERT_EQ(rows.size(), 200u);
  EXPECT_EQ(rows[199], 199);
  std::string fd = testing::Inside(run.dom, "first-divergence", "</section>");
  EXPECT_NE(fd.find(r.first_divergence.entry), std::string::npos) << fd;
  std::string svg = testing::Inside(run.dom, "plot", "</svg>");
  EXPECT_NE(svg.find("first divergence #" +
                     std::to_string(r.first_divergence.row_index + 1)),
            std::string::npos);
  EXPECT_GT(testing::CountOf(svg, "<circle class=\"v-error\""), 10u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
