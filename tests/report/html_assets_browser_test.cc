// The HTML pages' scripts and style sheets (src/report/assets/, and the
// curve plots' hover script in src/curve/assets/) as the libraries embed
// them: each embedded string is its file's bytes, and in
// headless Chromium each script, and the five as the report page joins
// them, parses as strict JavaScript (parsed, not run), and each style sheet
// keeps every rule it writes. Running the scripts on real pages is the other
// html_*_browser_tests' work. The browser test is skipped when
// /usr/bin/chromium is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/curve/curve_plot.h"
#include "report/chromium_page.h"
#include "report/html_internal.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::ConsoleMessages;
using testing::Describe;
using testing::kChromium;
using testing::PageRun;
using testing::TextOf;

struct Asset {
  std::string file;  // under src/
  std::string_view text;
  bool script;  // else a style sheet
};

std::vector<Asset> Assets() {
  return {
      {"report/assets/report.css", internal::kReportCss, false},
      {"report/assets/replay.css", internal::kReplayCss, false},
      {"report/assets/data.js", internal::kReportScriptData, true},
      {"report/assets/table_view.js", internal::kReportScriptTable, true},
      {"report/assets/plot.js", internal::kReportScriptPlot, true},
      {"report/assets/module_tree.js", internal::kReportScriptModules, true},
      {"report/assets/main.js", internal::kReportScriptMain, true},
      {"curve/assets/hover.js", CurveHoverScript(), true}};
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

TEST(HtmlAssetsTest, EmbeddedTextIsTheFileAndEveryFileIsChecked) {
  fs::path src = fs::path(LOCKSTEP_SOURCE_DIR) / "src";
  std::set<std::string> listed;
  for (const Asset& a : Assets()) {
    listed.insert(a.file);
    auto bytes = ReadFileToString((src / a.file).string());
    ASSERT_TRUE(bytes.ok()) << a.file;
    EXPECT_TRUE(*bytes == a.text)
        << a.file << " (" << bytes->size() << " bytes) is not what the "
        << "library embeds (" << a.text.size() << " bytes)";
    // The page pastes it inside <script> or <style>.
    EXPECT_EQ(Lower(a.text).find(a.script ? "</script" : "</style"),
              std::string::npos)
        << a.file;
  }
  for (const char* dir : {"report/assets", "curve/assets"}) {
    for (const fs::directory_entry& e : fs::directory_iterator(src / dir)) {
      std::string name = e.path().filename().string();
      if (name == "README.md") continue;
      EXPECT_TRUE(listed.count(std::string(dir) + "/" + name))
          << dir << "/" << name
          << ": an asset this test does not check (add it to Assets())";
    }
  }
}

std::string Base64(std::string_view s) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < s.size(); i += 3) {
    uint32_t v = static_cast<unsigned char>(s[i]) << 16;
    if (i + 1 < s.size()) v |= static_cast<unsigned char>(s[i + 1]) << 8;
    if (i + 2 < s.size()) v |= static_cast<unsigned char>(s[i + 2]);
    out += kDigits[(v >> 18) & 63];
    out += kDigits[(v >> 12) & 63];
    out += i + 1 < s.size() ? kDigits[(v >> 6) & 63] : '=';
    out += i + 2 < s.size() ? kDigits[v & 63] : '=';
  }
  return out;
}

// Checks each case ([name, "js" | "css", base64 of its UTF-8 text]) and
// writes "name<TAB>ok" (or what is wrong) per case into #out. A script is
// compiled as the body of a strict function, as the page runs it, and not
// run. A style sheet must keep as many rules (nested ones too) as its text
// opens blocks: the CSS parser drops a rule it cannot read.
constexpr char kChecker[] = R"JS(
function decode(b64) {
  const bin = atob(b64), bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder('utf-8', {fatal: true}).decode(bytes);
}
function blocks(css) {  // '{' outside comments and strings
  let n = 0;
  for (let i = 0; i < css.length; i++) {
    const c = css[i];
    if (c === '/' && css[i + 1] === '*') {
      const end = css.indexOf('*/', i + 2);
      i = end < 0 ? css.length : end + 1;
    } else if (c === '"' || c === "'") {
      for (i++; i < css.length && css[i] !== c; i++) if (css[i] === '\\') i++;
    } else if (c === '{') {
      n++;
    }
  }
  return n;
}
function rules(list) {
  let n = 0;
  for (const r of list) n += 1 + (r.cssRules ? rules(r.cssRules) : 0);
  return n;
}
const lines = [];
for (const [name, kind, b64] of CASES) {
  let result;
  try {
    const text = decode(b64);
    if (kind === 'js') {
      new Function("'use strict';\n" + text);
      result = 'ok';
    } else {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(text);
      const kept = rules(sheet.cssRules), written = blocks(text);
      result = kept === written && kept > 0 ? 'ok' : 'kept ' + kept + ' of ' + written + ' rules';
    }
  } catch (e) {
    result = e.name + ': ' + e.message;
  }
  lines.push(name + '\t' + result);
}
document.getElementById('out').textContent = lines.join('\n');
)JS";

struct Case {
  std::string name, kind, text;
};

// name -> result, from #out.
std::map<std::string, std::string> Results(const std::string& dom) {
  std::map<std::string, std::string> out;
  std::istringstream in(TextOf(dom, "out"));
  for (std::string line; std::getline(in, line);) {
    size_t tab = line.find('\t');
    if (tab != std::string::npos)
      out[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return out;
}

TEST(HtmlAssetsBrowserTest, ScriptsParseAndStyleSheetsKeepEveryRule) {
  if (access(kChromium, X_OK) != 0) GTEST_SKIP() << kChromium << " missing";
  std::vector<Case> cases;
  for (const Asset& a : Assets())
    cases.push_back({a.file, a.script ? "js" : "css", std::string(a.text)});
  // The script as AppendScripts (html_report.cc) joins it: one scope.
  cases.push_back({"page script", "js",
                   std::string(internal::kReportScriptData) +
                       std::string(internal::kReportScriptTable) +
                       std::string(internal::kReportScriptPlot) +
                       std::string(internal::kReportScriptModules) +
                       std::string(internal::kReportScriptMain)});
  // What the checker must refuse.
  cases.push_back({"bad syntax", "js", "function f( {\n"});
  cases.push_back({"bad strict", "js", "with (Math) { max(1, 2); }\n"});
  cases.push_back({"bad scope", "js", "const a = 1;\nlet a = 2;\n"});
  cases.push_back(
      {"bad css", "css", "p { color: red; }\n]x { color: blue; }\n"});

  fs::path dir = fs::temp_directory_path() /
                 ("lockstep_assets_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string page =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body>"
      "<pre id=\"out\"></pre>\n<script>\nconst CASES = [\n";
  for (const Case& c : cases)
    page +=
        "  ['" + c.name + "', '" + c.kind + "', '" + Base64(c.text) + "'],\n";
  page += "];\n" + std::string(kChecker) + "</script>\n</body></html>\n";
  std::string path = (dir / "assets.html").string();
  ASSERT_TRUE(WriteFileAtomic(path, page).ok());
  std::vector<PageRun> runs(1);
  runs[0].url = "file://" + path;
  testing::Start(dir, 0, &runs[0]);
  testing::WaitAll(dir, &runs, testing::kPageDeadline);
  const PageRun& run = runs[0];
  std::vector<std::string> console = ConsoleMessages(run.log);
  EXPECT_TRUE(console.empty())
      << console.size() << " console messages, first: " << console[0];

  std::map<std::string, std::string> results = Results(run.dom);
  ASSERT_EQ(results.size(), cases.size()) << Describe(run);
  for (const Case& c : cases) {
    const std::string& result = results[c.name];
    if (c.name.rfind("bad ", 0) == 0) {
      EXPECT_NE(result, "ok") << c.name << " was accepted";
      if (c.kind == "js")
        EXPECT_EQ(result.rfind("SyntaxError", 0), 0u)
            << c.name << ": " << result;
    } else {
      EXPECT_EQ(result, "ok") << c.name;
    }
  }
  EXPECT_EQ(results["bad css"], "kept 1 of 2 rules");
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
