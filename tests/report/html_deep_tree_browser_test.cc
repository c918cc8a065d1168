// Hostile model structure in the HTML report, in headless Chromium (issue
// 32): a construct.json parent chain 20,000 deep overflowed the script's
// stack when the page opened the path to the first divergence, and names
// holding U+202E (right-to-left override) or U+2028 (line separator)
// reached the page as they were. The page must load without a script
// error, show the first divergence's module, and show those characters as
// text ("\u202e") instead of obeying them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
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
using testing::Describe;
using testing::kChromium;
using testing::PageRun;

constexpr int kDepth = 20000;
const std::string kRlo = "\xe2\x80\xae", kLineSep = "\xe2\x80\xa8";

// What the page shows, as <body data-*>, which --dump-dom returns.
constexpr char kProbe[] = R"JS(<script>
(function () {
  const b = document.body, tree = document.getElementById('module-tree');
  b.dataset.fdNode = String(!!document.querySelector('#module-tree li.fd-node'));
  b.dataset.openPath = String(document.querySelectorAll('#module-tree li.fd-path').length);
  const text = document.body.innerText;
  b.dataset.rawRlo = String(text.includes('\u202e'));
  b.dataset.rawLineSep = String(text.includes('\u2028'));
  b.dataset.shownRlo = String(text.includes('\\u202e'));
  // Closing and opening the root redraws the whole open path.
  const tw = tree && tree.querySelector('button.tw');
  if (tw) {
    tw.click();
    document.querySelector('#module-tree button.tw').click();
    b.dataset.reopened = String(!!document.querySelector('#module-tree li.fd-node'));
  }
})();
</script>
)JS";

// A synthetic result whose rows all run in the deepest module of a chain
// `kDepth` modules deep; the first row's name holds U+202E and the
// deepest module's path U+2028.
CompareResult DeepResult() {
  CompareResult r = testing::MakeSyntheticResult(30);
  for (int k = 0; k < kDepth; ++k)
    r.modules.push_back({"m" + std::to_string(k), "Linear", k - 1});
  r.modules.back().path += kLineSep + "x";
  for (CompareRow& row : r.rows) row.module = kDepth - 1;
  std::vector<std::string> cells = r.rows[0].cells.ToVector();
  cells[0] = "Functional.evil" + kRlo + "txt.0.forward.input.0";
  r.rows[0].cells = PackedCells(cells);
  return r;
}

std::string Attr(const std::string& dom, const std::string& name) {
  std::string key = "data-" + name + "=\"";
  size_t at = dom.find(key);
  if (at == std::string::npos) return "<no data-" + name + ">";
  at += key.size();
  return dom.substr(at, dom.find('"', at) - at);
}

TEST(HtmlDeepTreeBrowserTest, ParentChain20000DeepOpensWithoutStackOverflow) {
  if (access(kChromium, X_OK) != 0) GTEST_SKIP() << kChromium << " missing";
  fs::path dir = fs::temp_directory_path() /
                 ("lockstep_deep_tree_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  CompareResult r = DeepResult();
  ASSERT_TRUE(r.first_divergence.found);
  std::string html = RenderHtmlReport(r);
  // The server side escapes too: no raw override in the page's markup
  // outside its data.
  size_t end = html.rfind("</body>");
  ASSERT_NE(end, std::string::npos);
  html.insert(end, kProbe);
  std::string page = (dir / "deep.html").string();
  ASSERT_TRUE(WriteFileAtomic(page, html).ok());
  std::vector<PageRun> runs(1);
  runs[0].url = "file://" + page;
  runs[0].args = {"--window-size=1600,1000"};
  testing::Start(dir, 0, &runs[0]);
  testing::WaitAll(dir, &runs, testing::kPageDeadline);
  const PageRun& run = runs[0];
  std::vector<std::string> console = ConsoleMessages(run.log);
  EXPECT_TRUE(console.empty())
      << console.size() << " console messages, first: " << console[0];
  EXPECT_NE(run.dom.find("data-ready=\"1\""), std::string::npos)
      << Describe(run);
  EXPECT_EQ(Attr(run.dom, "fd-node"), "true") << Describe(run);
  EXPECT_EQ(Attr(run.dom, "open-path"), std::to_string(kDepth - 1));
  EXPECT_EQ(Attr(run.dom, "reopened"), "true");
  EXPECT_EQ(Attr(run.dom, "raw-rlo"), "false");
  EXPECT_EQ(Attr(run.dom, "raw-line-sep"), "false");
  EXPECT_EQ(Attr(run.dom, "shown-rlo"), "true");
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
