// The HTML report in a real browser: headless Chromium loads a report of
// 2,500 synthetic rows (and a deliberately broken copy), and the DOM it dumps
// after the script ran is checked, together with Chromium's console log.
// Skipped when /usr/bin/chromium is missing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/report/html_report.h"
#include "report/synthetic_result.h"

extern char** environ;

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::CountVerdict;

constexpr char kChromium[] = "/usr/bin/chromium";
constexpr int kRows = 2500;
constexpr auto kBrowserTimeout = std::chrono::seconds(40);

struct PageRun {
  std::string url;
  pid_t pid = -1;
  int status = -1;
  std::string dom;  // what --dump-dom printed
  std::string log;  // Chromium's stderr, with the page's console messages
};

// The command line: --dump-dom prints the DOM after the load event, and
// --enable-logging=stderr puts the page's console messages in the log.
std::vector<std::string> BrowserArgs(const std::string& profile,
                                     const std::string& url) {
  return {kChromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--user-data-dir=" + profile,
          "--enable-logging=stderr",
          "--v=0",
          "--dump-dom",
          url};
}

// This process's environment with HOME moved to `home`.
std::vector<std::string> EnvironmentWithHome(const fs::path& home) {
  std::vector<std::string> env = {"HOME=" + home.string()};
  for (char** e = environ; *e; ++e) {
    if (std::string_view(*e).rfind("HOME=", 0) != 0) env.push_back(*e);
  }
  return env;
}

// argv/envp style: pointers into `strings`, then nullptr.
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts Chromium on run->url in its own process group, with its own profile
// and HOME under `dir`; stdout and stderr go to files there.
void Start(const fs::path& dir, int n, PageRun* run) {
  std::string out = (dir / ("dom" + std::to_string(n))).string();
  std::string err = (dir / ("log" + std::to_string(n))).string();
  std::vector<std::string> args =
      BrowserArgs((dir / ("profile" + std::to_string(n))).string(), run->url);
  std::vector<std::string> env = EnvironmentWithHome(dir);
  std::vector<char*> argv = CStrings(args), envp = CStrings(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  if (posix_spawn(&run->pid, kChromium, &actions, &attr, argv.data(),
                  envp.data()) != 0) {
    run->pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
}

// Waits for every run (killing the process group of any that overstays),
// then reads its output.
void WaitAll(const fs::path& dir, std::vector<PageRun>* runs) {
  auto deadline = std::chrono::steady_clock::now() + kBrowserTimeout;
  for (size_t n = 0; n < runs->size(); ++n) {
    PageRun& run = (*runs)[n];
    if (run.pid <= 0) continue;  // not started
    while (run.pid > 0 && waitpid(run.pid, &run.status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(-run.pid, SIGKILL);
        waitpid(run.pid, &run.status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (run.pid > 0)
      kill(-run.pid, SIGKILL);  // helpers left in its group, if any
    auto dom = ReadFileToString((dir / ("dom" + std::to_string(n))).string());
    auto log = ReadFileToString((dir / ("log" + std::to_string(n))).string());
    run.dom = dom.ok() ? *dom : "";
    run.log = log.ok() ? *log : "";
  }
}

// The page's console output and uncaught exceptions, one per line, from
// Chromium's log (lines like `INFO:CONSOLE:12] "Uncaught ...", source: ...`).
std::vector<std::string> ConsoleMessages(const std::string& log) {
  static const std::regex kConsole(R"(:CONSOLE[:(]|Uncaught)");
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, kConsole)) out.push_back(line);
  }
  return out;
}

// The text of the element with `id` (from its opening tag to the next '<').
std::string TextOf(const std::string& dom, const std::string& id) {
  size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "<missing #" + id + ">";
  at = dom.find('>', at) + 1;
  return dom.substr(at, dom.find('<', at) - at);
}

// The HTML between the opening tag of `#id` and the first `close` after it.
std::string Inside(const std::string& dom, const std::string& id,
                   const std::string& close) {
  size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return dom.substr(at, dom.find(close, at) - at);
}

size_t CountOf(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1))
    ++n;
  return n;
}

// The data-i of each table row, in order.
std::vector<int> RowIndices(const std::string& dom) {
  std::vector<int> out;
  std::string body = Inside(dom, "rows", "</tbody>");
  static const std::regex kRow(R"re(<tr class="([^"]*)" data-i="(\d+)")re");
  for (std::sregex_iterator it(body.begin(), body.end(), kRow), end; it != end;
       ++it) {
    out.push_back(std::stoi((*it)[2]));
  }
  return out;
}

std::string Describe(const PageRun& run) {
  return run.url + " (exit status " + std::to_string(run.status) +
         ")\n--- log tail ---\n" +
         run.log.substr(run.log.size() > 3000 ? run.log.size() - 3000 : 0);
}

enum Page { kPlain, kErrors, kConvByCosine, kGoToRow, kBroken, kPageCount };
constexpr int kGoTo = 1800;  // 1-based row number, on page 9 of 200-row pages

// The page each test looks at: only the pages of the tests selected to run
// are loaded (ctest runs each test in its own process).
Page PageOf(std::string_view test) {
  if (test == "VerdictInUrlFiltersRows") return kErrors;
  if (test == "NameFilterAndNumericSortFromUrl") return kConvByCosine;
  if (test == "RowInUrlOpensItsPage") return kGoToRow;
  if (test == "DetectsScriptErrorsInABrokenPage") return kBroken;
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
        Start(dir_, n, &(*runs_)[n]);  // all at once: they run in parallel
    }
    WaitAll(dir_, runs_);
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
  }

  static std::vector<PageRun> PageRuns(const fs::path& dir) {
    std::string base = "file://" + (dir / "report.html").string();
    std::vector<PageRun> runs(kPageCount);
    runs[kPlain].url = base;
    runs[kErrors].url = base + "#verdict=error";
    runs[kConvByCosine].url = base + "#filter=CONV2D.1&sort=Cosine&dir=desc";
    runs[kGoToRow].url = base + "#row=" + std::to_string(kGoTo);
    runs[kBroken].url = "file://" + (dir / "broken.html").string();
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

  // The run's DOM, asserting that the page rendered without console output.
  static const PageRun& Loaded(Page page) {
    const PageRun& run = (*runs_)[page];
    EXPECT_NE(run.dom.find("data-ready=\"1\""), std::string::npos)
        << Describe(run);
    std::vector<std::string> console = ConsoleMessages(run.log);
    EXPECT_TRUE(console.empty())
        << console.size() << " console messages, first: " << console[0];
    return run;
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
  EXPECT_NE(dom.find("<tr class=\"v-warning\""), std::string::npos);
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

}  // namespace
}  // namespace lockstep
