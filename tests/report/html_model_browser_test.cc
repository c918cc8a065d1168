// The model in the HTML report, in headless Chromium: the module tree, the
// first divergence's module and stack, the Step column and step marks, the
// loss-curve card with its hover values, at 1920 and 1280 px, light and
// dark. A probe script added to a copy of each page measures what the DOM
// alone does not tell (overflow, computed colours, the hover tips) and
// writes it into <body data-*>, which --dump-dom returns.
// Set LOCKSTEP_REPORT_KEEP_DIR to keep the pages (to look at them).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "lockstep/compare/compare_dumps.h"
#include "lockstep/core/file.h"
#include "lockstep/curve/curve_compare.h"
#include "lockstep/curve/curve_plot.h"
#include "lockstep/report/html_report.h"
#include "report/chromium_page.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::ConsoleMessages;
using testing::CountOf;
using testing::Describe;
using testing::Inside;
using testing::kChromium;
using testing::PageRun;

const std::string kMsprobe = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";

// What the probe measures, as <body data-*> attributes.
constexpr char kProbe[] = R"JS(<script>
(function () {
  const b = document.body, css = (el, p) => el ? getComputedStyle(el)[p] : '';
  b.dataset.overflow = String(document.documentElement.scrollWidth - innerWidth);
  b.dataset.bg = css(b, 'backgroundColor');
  b.dataset.ink = css(b, 'color');
  b.dataset.cardBg = css(document.querySelector('.card'), 'backgroundColor');
  let wide = [];
  for (const c of document.querySelectorAll('.card')) {
    const r = c.getBoundingClientRect();
    for (const el of c.querySelectorAll('svg, .mrow, .frame, .fd-module')) {
      const e = el.getBoundingClientRect();
      if (e.width && (e.right > r.right + 1 || e.left < r.left - 1)) wide.push(el.tagName + '.' + el.getAttribute('class'));
    }
  }
  b.dataset.outside = wide.join(' ');
  const curve = document.querySelector('#curves svg');
  if (curve) {
    const r = curve.getBoundingClientRect(), card = curve.parentNode.getBoundingClientRect();
    b.dataset.curveFill = String(Math.round(r.width / card.width * 100));
    const h2 = curve.parentNode.querySelector('h2').getBoundingClientRect();
    b.dataset.curveTitleAbove = String(h2.bottom <= r.top + 1);
    b.dataset.curveBg = css(curve.querySelector('.bg'), 'fill');
    const p = curve.dataset.plot.split(',').map(Number), s = r.width / curve.viewBox.baseVal.width;
    const x = r.left + (p[0] + p[2] * 0.75) * s, y = r.top + (p[1] + p[3] / 2) * s;
    curve.dispatchEvent(new MouseEvent('mousemove', {clientX: x, clientY: y, bubbles: true}));
    const tip = document.querySelector('.curve-tip');
    b.dataset.curveTip = tip && !tip.hidden ? tip.textContent : '';
  }
  const plot = document.getElementById('plot');
  if (plot) {
    const r = plot.getBoundingClientRect();
    plot.dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + r.width * 0.8, clientY: r.top + 50,
                                                    bubbles: true}));
    b.dataset.plotTip = document.getElementById('plot-tip').hidden ? '' : document.getElementById('plot-tip').textContent;
  }
  const fd = document.querySelector('#module-tree li.fd-node');
  b.dataset.fdModuleBox = fd ? String(fd.getBoundingClientRect().height > 0) : 'none';
  // Opening a closed module draws its children; a module's name goes to
  // its worst row.
  const closed = document.querySelector('#module-tree button.tw[aria-expanded="false"]');
  if (closed) {
    const m = closed.closest('li').dataset.m;
    closed.click();
    const li = document.querySelector('#module-tree li[data-m="' + m + '"]');
    b.dataset.opened = String(!!(li && li.querySelector('ul > li.mod')));
  }
  const name = document.querySelector('#module-tree li.fd-node > .mrow > a.mname');
  if (name) {
    name.click();
    const tr = document.querySelector('#rows tr.selected');
    b.dataset.selectedRow = tr ? tr.dataset.i : 'none';
  }
  // The tree shows the first divergence's step; "all steps" shows every
  // step's rows (the first module's row count, before and after).
  const mrows = () => {
    const e = document.querySelector('#module-tree li.mod .mrows');
    return e ? e.textContent : '';
  };
  b.dataset.stepRows = mrows();
  const all = document.getElementById('module-all-steps');
  if (all) {
    all.click();
    b.dataset.allRows = mrows();
  } else {
    b.dataset.allRows = 'no switch';
  }
})();
</script>
)JS";

std::string Attr(const std::string& dom, const std::string& name) {
  std::smatch m;
  std::regex re("data-" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : "<no data-" + name + ">";
}

// A loss curve: both runs agree for 300 steps (the lines lie on each
// other), then the target drifts.
CurveComparison Curves() {
  CurveLog a, b;
  a.source = "baseline.log";
  b.source = "target.log";
  std::vector<CurvePoint> pa, pb;
  for (int i = 0; i < 600; ++i) {
    double v = 2.5 * std::exp(-i / 150.0) + 0.3;
    pa.push_back({i, v});
    pb.push_back({i, v + (i > 300 ? (i - 300) * 2e-4 : 0)});
  }
  a.metrics[kMetricLoss] = {kMetricLoss, pa};
  b.metrics[kMetricLoss] = {kMetricLoss, pb};
  auto c = CompareCurves({a, b}, {});
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : CurveComparison();
}

// quick_start's two steps against a copy whose step 1 has one operator's
// output changed (the norm of layer1.1.conv1's conv2d made ~100x larger):
// step 0 agrees, step 1 diverges there, three modules deep.
constexpr char kChanged[] = "Functional.conv2d.5.forward";
StatusOr<CompareResult> TwoStepResult(const fs::path& dir) {
  fs::path base = dir / "baseline", step1 = base / "step1/proc2016";
  fs::copy(kMsprobe + "/quick_start", base, fs::copy_options::recursive);
  fs::copy_file(base / "step0/proc2016/stack.json", step1 / "stack.json");
  auto text = ReadFileToString((step1 / "dump.json").string());
  if (!text.ok()) return text.status();
  size_t at = text->find(std::string("\"") + kChanged + "\"");
  at = at == std::string::npos ? at : text->find("\"output\"", at);
  at = at == std::string::npos ? at : text->find("\"Norm\": ", at);
  if (at == std::string::npos) return Status::NotFound(kChanged, "not found");
  text->insert(at + 8, "9");
  LOCKSTEP_RETURN_IF_ERROR(
      WriteFileAtomic((step1 / "dump.json").string(), *text));
  return CompareDumpPaths(kMsprobe + "/quick_start", base.string(), {});
}

enum Page { kModel, kToy, kPageCount };
struct View {
  Page page;
  int width;
  bool dark;
};
constexpr View kViews[] = {{kModel, 1920, false}, {kModel, 1280, false},
                           {kModel, 1920, true},  {kModel, 1280, true},
                           {kToy, 1920, false},   {kToy, 1280, true}};
constexpr int kViewCount = sizeof(kViews) / sizeof(kViews[0]);

class HtmlModelBrowserTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (access(kChromium, X_OK) != 0) return;
    const char* keep = std::getenv("LOCKSTEP_REPORT_KEEP_DIR");
    keep_ = keep != nullptr && *keep;
    dir_ = keep_ ? fs::path(keep)
                 : fs::temp_directory_path() /
                       ("lockstep_model_browser_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto model = TwoStepResult(dir_);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    auto toy = CompareDumpPaths(kMsprobe + "/toy/dumpB/out",
                                kMsprobe + "/toy/dumpA/out", {});
    ASSERT_TRUE(toy.ok()) << toy.status().ToString();
    results_ =
        new CompareResult[kPageCount]{std::move(*model), std::move(*toy)};
    HtmlExtras curves;
    curves.curves_svg = RenderCurveSvg(Curves(), kWideCurvePlot);
    WritePage("model", RenderHtmlReport(results_[kModel], curves));
    WritePage("toy", RenderHtmlReport(results_[kToy]));
    runs_ = new std::vector<PageRun>(kViewCount);
    for (int v = 0; v < kViewCount; ++v) {
      PageRun& run = (*runs_)[v];
      const char* name = kViews[v].page == kModel ? "model" : "toy";
      run.url =
          "file://" + (dir_ / (std::string(name) + "_probe.html")).string();
      run.args = {"--window-size=" + std::to_string(kViews[v].width) + ",1000",
                  "--hide-scrollbars"};
      if (kViews[v].dark) run.args.push_back("--force-dark-mode");
      testing::Start(dir_, v, &run);
    }
    testing::WaitAll(dir_, runs_, testing::kPageDeadline);
  }

  // The page, and a copy with the probe (before </body>).
  static void WritePage(const std::string& name, std::string html) {
    ASSERT_TRUE(WriteFileAtomic((dir_ / (name + ".html")).string(), html).ok());
    size_t end = html.rfind("</body>");
    ASSERT_NE(end, std::string::npos);
    html.insert(end, kProbe);
    ASSERT_TRUE(
        WriteFileAtomic((dir_ / (name + "_probe.html")).string(), html).ok());
  }

  static void TearDownTestSuite() {
    if (!dir_.empty() && !keep_) fs::remove_all(dir_);
    delete runs_;
    delete[] results_;
  }

  void SetUp() override {
    if (access(kChromium, X_OK) != 0)
      GTEST_SKIP() << kChromium << " is missing: install chromium";
  }

  static const std::string& Dom(int view) {
    const PageRun& run = (*runs_)[view];
    EXPECT_NE(run.dom.find("data-ready=\"1\""), std::string::npos)
        << Describe(run);
    std::vector<std::string> console = ConsoleMessages(run.log);
    EXPECT_TRUE(console.empty())
        << console.size() << " console messages, first: " << console[0];
    return run.dom;
  }

  static inline fs::path dir_;
  static inline bool keep_ = false;
  static inline CompareResult* results_ = nullptr;
  static inline std::vector<PageRun>* runs_ = nullptr;
};

TEST_F(HtmlModelBrowserTest, ModuleTreeOpensTheFirstDivergencesModule) {
  const CompareResult& r = results_[kModel];
  ASSERT_TRUE(r.first_divergence.found);
  EXPECT_EQ(r.first_divergence.entry, kChanged);
  EXPECT_EQ(r.first_divergence.step, 1);
  int32_t m = r.rows[r.first_divergence.row_index].module;
  ASSERT_GE(m, 0) << r.first_divergence.entry << " has no module";
  const std::string& dom = Dom(0);
  std::string tree = Inside(dom, "module-tree", "</section>");
  ASSERT_FALSE(tree.empty());
  // The divergent module is drawn, marked, and each module above it open.
  EXPECT_NE(tree.find("class=\"mod v-error fd-node\" data-m=\"" +
                      std::to_string(m) + "\""),
            std::string::npos)
      << tree.substr(0, 3000);
  EXPECT_EQ(CountOf(tree, "fd-node"), 1u);
  int depth = 0;
  for (int32_t up = r.modules[m].parent; up >= 0; up = r.modules[up].parent) {
    ++depth;
    EXPECT_NE(tree.find("fd-path\" data-m=\"" + std::to_string(up) +
                        "\" role=\"treeitem\"><div class=\"mrow\" title=\"" +
                        r.modules[up].path +
                        "\"><button type=\"button\" class=\"tw\" "
                        "aria-expanded=\"true\""),
              std::string::npos)
        << r.modules[up].path;
  }
  EXPECT_EQ(depth, 2);  // layer1 > 1 > conv1
  EXPECT_EQ(Attr(dom, "fd-module-box"), "true");
  EXPECT_EQ(Attr(dom, "opened"), "true");
  // The divergent module's worst row is the divergent row.
  EXPECT_EQ(Attr(dom, "selected-row"),
            std::to_string(r.first_divergence.row_index));
  // Container modules that only construct.json names are in it.
  EXPECT_NE(tree.find("title=\"layer1\""), std::string::npos);
  EXPECT_NE(tree.find(">Sequential<"), std::string::npos);
}

TEST_F(HtmlModelBrowserTest, DivergenceCardNamesModuleAndShowsStack) {
  std::string fd = Inside(Dom(0), "first-divergence", "</section>");
  std::string module = Inside(fd, "fd-module", "</p>");
  EXPECT_NE(module.find("<span title=\"layer1\">layer1</span><span "
                        "class=\"sep\">\xE2\x80\xBA</span><span "
                        "title=\"layer1.1\">1</span><span "
                        "class=\"sep\">\xE2\x80\xBA</span><b "
                        "title=\"layer1.1.conv1\">conv1</b> <span "
                        "class=\"cls\">Conv2d</span>"),
            std::string::npos)
      << fd;
  // quick_start's stack.json (HEAD format): all library frames but the
  // script's own.
  // To the card's end: library frames fold into nested <details>.
  std::string stack = Inside(fd, "fd-stack", "</section>");
  EXPECT_NE(stack.find("<li class=\"frame user\"><span class=\"loc\"><code>"
                       "/root/precision_sample.py:32</code> in <code "
                       "class=\"fn\">&lt;module&gt;</code></span><pre "
                       "class=\"src\">loss = criterion(model(images), "
                       "target)</pre></li>"),
            std::string::npos)
      << stack;
  EXPECT_EQ(CountOf(stack, "frame user"), 1u);
  // The innermost frame shows; the 17 library frames after it fold.
  EXPECT_LT(stack.find("api_registry.py:95"),
            stack.find("<li class=\"fold\"><details><summary>17 library "
                       "frames</summary>"));
  // The toy's (old format, {name: frames}): frames of the user's script.
  stack = Inside(Inside(Dom(4), "first-divergence", "</section>"), "fd-stack",
                 "</section>");
  ASSERT_FALSE(stack.empty());
  const auto& frames = results_[kToy].first_divergence.stack;
  EXPECT_EQ(CountOf(stack, "<li class=\"frame"), frames.size());
  std::regex frame(
      R"re(<li class="frame (user|lib)"><span class="loc"><code>[^<]+:\d+</code> in <code class="fn">[^<]+</code></span><pre class="src">)re");
  EXPECT_TRUE(std::regex_search(stack, frame)) << stack;
  EXPECT_GT(CountOf(stack, "frame user"), 0u) << stack;
  EXPECT_GT(CountOf(stack, "frame lib"), 0u) << stack;
  EXPECT_EQ(stack.find("File "), std::string::npos);  // taken apart
}

TEST_F(HtmlModelBrowserTest, StepColumnBesideTheNameAndStepMarksInThePlot) {
  const std::string& dom = Dom(0);
  std::string head = Inside(dom, "head", "</tr>");
  size_t name = head.find(">NPU Name<"), step = head.find(">Step<"),
         bench = head.find(">Bench Name<");
  ASSERT_NE(step, std::string::npos) << head;
  EXPECT_LT(name, step);
  EXPECT_LT(step, bench);
  std::string plot = Inside(dom, "plot", "</svg>");
  EXPECT_EQ(CountOf(plot, "class=\"stepline\""), 1u);
  EXPECT_NE(plot.find(">step 0</text>"), std::string::npos);
  EXPECT_NE(plot.find(">step 1</text>"), std::string::npos);
  EXPECT_NE(Attr(dom, "plot-tip").find("step 1"), std::string::npos)
      << Attr(dom, "plot-tip");
}

TEST_F(HtmlModelBrowserTest, CurvesFillTheCardAndShowValuesOnHover) {
  for (int v : {0, 1, 2, 3}) {
    const std::string& dom = Dom(v);
    int fill = std::atoi(Attr(dom, "curve-fill").c_str());
    // 1400 px at 1920 (a card of 1750), the card's width at 1280.
    EXPECT_GE(fill, kViews[v].width == 1920 ? 75 : 95) << kViews[v].width;
    EXPECT_LE(fill, 100) << kViews[v].width;
    // The title is above the plot (it was beside it, at the bottom, where
    // the SVG was inline and the card wide enough for both).
    EXPECT_EQ(Attr(dom, "curve-title-above"), "true") << kViews[v].width;
    std::string tip = Attr(dom, "curve-tip");
    EXPECT_NE(tip.find("baseline.log (reference): "), std::string::npos) << tip;
    EXPECT_NE(tip.find("target.log: "), std::string::npos) << tip;
    EXPECT_NE(tip.find("\xCE\x94 +"), std::string::npos) << tip;  // Δ
  }
}

TEST_F(HtmlModelBrowserTest, NothingOverflowsAt1920And1280) {
  for (int v = 0; v < kViewCount; ++v) {
    const std::string& dom = Dom(v);
    EXPECT_LE(std::atoi(Attr(dom, "overflow").c_str()), 0)
        << kViews[v].width << (kViews[v].dark ? " dark" : " light");
    EXPECT_EQ(Attr(dom, "outside"), "") << kViews[v].width;
  }
}

TEST_F(HtmlModelBrowserTest, DarkSchemeChangesColours) {
  const std::string &light = Dom(0), &dark = Dom(2);
  for (const char* a : {"bg", "ink", "card-bg", "curve-bg"}) {
    EXPECT_NE(Attr(light, a), Attr(dark, a)) << a;
    EXPECT_EQ(Attr(light, a).rfind("rgb", 0), 0u) << a << Attr(light, a);
  }
  EXPECT_EQ(Attr(dark, "bg"), "rgb(18, 22, 29)");
  // The curve's background follows the card's.
  EXPECT_EQ(Attr(dark, "curve-bg"), Attr(dark, "card-bg"));
}

// quick_start's pair diverges at step 1 of two: the tree first counts step
// 1's rows; "all steps" counts both steps' (twice as many: the steps dump
// the same calls). The one-step toy page has no switch.
TEST_F(HtmlModelBrowserTest, ModuleTreeShowsTheDivergenceStepThenAllSteps) {
  ASSERT_EQ(results_[kModel].first_divergence.step, 1);
  const std::string& dom = Dom(0);
  std::string step = Attr(dom, "step-rows"), all = Attr(dom, "all-rows");
  ASSERT_FALSE(step.empty()) << "no module row count";
  ASSERT_NE(all, "no switch");
  EXPECT_EQ(std::stoll(all), 2 * std::stoll(step)) << step << " vs " << all;
  EXPECT_EQ(Attr(Dom(4), "all-rows"), "no switch");
}

TEST_F(HtmlModelBrowserTest, TreeDataStaysCompact) {
  // Per module a few numbers and its path: the data grows with the
  // modules, not with the rows.
  std::string html = RenderHtmlReport(results_[kModel]);
  CompareResult without = results_[kModel];
  without.modules.clear();
  size_t tree = html.size() - RenderHtmlReport(without).size();
  EXPECT_LT(tree, 120 * results_[kModel].modules.size() + 2000)
      << results_[kModel].modules.size() << " modules";
}

}  // namespace
}  // namespace lockstep
