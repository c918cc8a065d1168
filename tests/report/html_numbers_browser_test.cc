// The report script's number functions, run as JavaScript in headless
// Chromium against their C++ twins: pyRepr (Python's repr of a double,
// which the page uses to derive statistics diff cells) against
// numerics/pyfloat's PyFloatRepr on edge cases and random bit patterns,
// and deriveStat against the derivation the table encoder checks every
// derived cell with. A derived cell the script computed differently would
// show a wrong number in the report; the encoder cannot see the script, so
// this test is what ties the two. Skipped when /usr/bin/chromium is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/numerics/pyfloat.h"
#include "lockstep/report/html_report.h"
#include "report/chromium_page.h"
#include "report/html_internal.h"
#include "report/msprobe_csv_result.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

uint64_t Bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

double FromBits(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

// The derivation as the table's schema states it (html_internal.h), from
// the texts.
std::string Derive(const std::string& a, const std::string& b, bool rel) {
  if (a == b) return "0";
  double x = 0, y = 0;
  std::from_chars(a.data(), a.data() + a.size(), x);
  std::from_chars(b.data(), b.data() + b.size(), y);
  if (!rel) return PyFloatRepr(x - y);
  return y == 0 ? "inf" : PyFloatRepr(std::fabs((x - y) / y * 100)) + "%";
}

// The script's functions from pyRepr up to the column decoder.
std::string NumberFunctions() {
  std::string_view js = internal::kReportScriptData;
  size_t from = js.find("function pyRepr");
  size_t to = js.find("function decodeColumn");
  EXPECT_NE(from, std::string_view::npos);
  EXPECT_NE(to, std::string_view::npos);
  return std::string(js.substr(from, to - from));
}

TEST(HtmlNumbersBrowserTest, PyReprAndDeriveStatMatchTheirCppTwins) {
  if (access(testing::kChromium, X_OK) != 0)
    GTEST_SKIP() << testing::kChromium << " is missing: install chromium";
  std::vector<double> xs = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            100.0,
                            0.1,
                            0.1 + 0.2,
                            1e-4,
                            -1e-4,
                            1e-5,
                            1.5e-5,
                            0.00012,
                            123.456,
                            1e15,
                            9999999999999998.0,
                            1e16,
                            1.2345e16,
                            1e21,
                            1e22,
                            1e100,
                            5e-324,
                            2.2250738585072014e-308,
                            std::numeric_limits<double>::max(),
                            -1e-300,
                            65504.0,
                            3.3895313892515355e38,
                            0.0078125,
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity()};
  std::mt19937_64 gen(20261128);
  // Random bit patterns (every exponent), then values around the fixed /
  // exponent boundaries (1e-5 .. 1e17) with short and long mantissas.
  while (xs.size() < 3000) {
    double d = FromBits(gen());
    if (std::isfinite(d)) xs.push_back(d);
  }
  std::uniform_real_distribution<double> unit(1, 10);
  std::uniform_int_distribution<int> exp10(-6, 17), digits(1, 17);
  for (int i = 0; i < 3000; ++i) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.*e", digits(gen) - 1, unit(gen));
    double d = std::stod(buf) * std::pow(10.0, exp10(gen));
    xs.push_back(i % 2 ? -d : d);
  }
  // Statistics texts as dumps hold them: reprs, 9-digit floats, integers.
  std::vector<std::pair<std::string, std::string>> pairs = {
      {"1.0", "1.0"}, {"0.0", "1.5"}, {"2", "0"}, {"0", "0.0"}, {"3", "-3"}};
  std::uniform_real_distribution<double> near(0.97, 1.03);
  for (int i = 0; i < 2000; ++i) {
    double b = std::stod("1e" + std::to_string(exp10(gen))) * unit(gen);
    double a = b * near(gen);
    char ta[64], tb[64];
    if (i % 3 == 0) {
      std::snprintf(ta, sizeof(ta), "%.9g", a);
      std::snprintf(tb, sizeof(tb), "%.9g", b);
      pairs.emplace_back(ta, tb);
    } else {
      pairs.emplace_back(PyFloatRepr(a), PyFloatRepr(i % 3 == 1 ? b : -b));
    }
  }

  std::string page = "<!doctype html><meta charset=utf-8><pre id=out></pre>";
  page += "<script>\n" + NumberFunctions() + "\nconst X = [";
  for (size_t i = 0; i < xs.size(); ++i) {
    page += (i ? ",'0x" : "'0x");
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx",
                  static_cast<unsigned long long>(Bits(xs[i])));
    page += std::string(hex) + "'";
  }
  page += "], P = [";
  for (size_t i = 0; i < pairs.size(); ++i) {
    page +=
        (i ? ",['" : "['") + pairs[i].first + "','" + pairs[i].second + "']";
  }
  page += R"JS(];
const v = new DataView(new ArrayBuffer(8)), out = [];
for (const h of X) { v.setBigUint64(0, BigInt(h)); out.push(pyRepr(v.getFloat64(0))); }
for (const [a, b] of P) out.push(deriveStat(a, b, false), deriveStat(a, b, true));
document.getElementById('out').textContent = out.join('|');
</script>)JS";

  fs::path dir = fs::temp_directory_path() /
                 ("lockstep_numbers_browser_" + std::to_string(getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(WriteFileAtomic((dir / "numbers.html").string(), page).ok());
  std::vector<testing::PageRun> runs(1);
  runs[0].url = "file://" + (dir / "numbers.html").string();
  testing::Start(dir, 0, &runs[0]);
  testing::WaitAll(dir, &runs, testing::kPageDeadline);
  std::vector<std::string> console = testing::ConsoleMessages(runs[0].log);
  EXPECT_TRUE(console.empty())
      << console.size() << " console messages, first: " << console[0];

  std::vector<std::string> got;
  std::string text = testing::TextOf(runs[0].dom, "out");
  for (size_t from = 0;;) {
    size_t bar = text.find('|', from);
    got.push_back(text.substr(from, bar - from));
    if (bar == std::string::npos) break;
    from = bar + 1;
  }
  ASSERT_EQ(got.size(), xs.size() + 2 * pairs.size()) << text.substr(0, 300);
  size_t wrong = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (got[i] != PyFloatRepr(xs[i]) && ++wrong < 10)
      ADD_FAILURE() << "pyRepr(" << PyFloatRepr(xs[i]) << ") gave " << got[i];
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto& [a, b] = pairs[i];
    for (int rel = 0; rel < 2; ++rel) {
      std::string want = Derive(a, b, rel), js = got[xs.size() + 2 * i + rel];
      if (js != want && ++wrong < 10)
        ADD_FAILURE() << "deriveStat(" << a << ", " << b << ", " << rel
                      << ") gave " << js << ", not " << want;
    }
  }
  EXPECT_EQ(wrong, 0u);
  fs::remove_all(dir);
}

// A statistics compare written by msprobe (2,822 rows, step 1 against step
// 0 of a real training run) in the page: every diff cell of the first page
// of rows, which the page derives from the statistics, shows msprobe's
// text.
TEST(HtmlNumbersBrowserTest, DerivedDiffCellsShowMsprobesText) {
  if (access(testing::kChromium, X_OK) != 0)
    GTEST_SKIP() << testing::kChromium << " is missing: install chromium";
  std::string dir =
      std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy/out_summary";
  std::string csv;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".csv") csv = e.path().string();
  }
  auto text = ReadFileToString(csv);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  CompareResult r =
      testing::ResultFromMsprobeCsv(*text, CompareMode::kStatistics);
  std::string html = RenderHtmlReport(r);
  ASSERT_NE(html.find("\"derive\":[["), std::string::npos);

  fs::path out = fs::temp_directory_path() /
                 ("lockstep_derived_browser_" + std::to_string(getpid()));
  fs::create_directories(out);
  ASSERT_TRUE(WriteFileAtomic((out / "report.html").string(), html).ok());
  std::vector<testing::PageRun> runs(1);
  runs[0].url = "file://" + (out / "report.html").string();
  testing::Start(out, 0, &runs[0]);
  testing::WaitAll(out, &runs, testing::kPageDeadline);
  const std::string& dom = runs[0].dom;
  std::vector<std::string> console = testing::ConsoleMessages(runs[0].log);
  EXPECT_TRUE(console.empty())
      << console.size() << " console messages, first: " << console[0];
  std::vector<int> rows = testing::RowIndices(dom);
  ASSERT_EQ(rows.size(), 200u) << testing::Describe(runs[0]);
  size_t checked = 0, numbers = 0;
  for (int i : rows) {
    size_t at = dom.find("data-i=\"" + std::to_string(i) + "\"");
    ASSERT_NE(at, std::string::npos);
    std::string tr = dom.substr(at, dom.find("</tr>", at) - at);
    for (const char* name :
         {"Max diff", "Min diff", "Mean diff", "L2norm diff", "MaxRelativeErr",
          "MinRelativeErr", "MeanRelativeErr", "NormRelativeErr"}) {
      size_t c = std::find(r.columns.begin(), r.columns.end(), name) -
                 r.columns.begin();
      ASSERT_LT(c, r.columns.size()) << name;
      std::string cell(r.rows[i].cells[c]);
      EXPECT_NE(tr.find(">" + cell + "</td>"), std::string::npos)
          << "row " << i << " " << name << ": " << cell << " not in " << tr;
      ++checked;
      numbers += cell.size() > 3;
    }
  }
  EXPECT_EQ(checked, 1600u);
  EXPECT_GT(numbers, 500u);  // 790 are numbers, not "0", "N/A" or "inf"
  fs::remove_all(out);
}

}  // namespace
}  // namespace lockstep
