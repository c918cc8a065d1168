// The first-divergence card's model context: the module the entry runs in
// (from the module tree) and its call stack from stack.json, frames as
// "path:line in func" with the source line, the user's own frames set apart
// from library ones (torch, other installed packages, Python itself), which
// fold away but for the innermost frame.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "html_internal.h"

namespace lockstep::internal {
namespace {

constexpr size_t kMaxFrames = 64;

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// A frame as stack.json writes it: "File {path}, line {n}, in {func}, \n
// {code}". false when `text` is not one (then shown as it is).
bool ParseFrame(std::string_view text, StackFrame* f) {
  size_t nl = text.find('\n');
  std::string_view head = text.substr(0, nl);
  std::string_view code =
      nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  while (!head.empty() && (head.back() == ' ' || head.back() == ','))
    head.remove_suffix(1);
  if (head.substr(0, 5) != "File ") return false;
  size_t in = head.rfind(", in ");
  size_t line = head.rfind(", line ", in);
  if (in == std::string_view::npos || line == std::string_view::npos ||
      line < 5)
    return false;
  f->path = std::string(head.substr(5, line - 5));
  f->line = std::string(head.substr(line + 7, in - line - 7));
  f->func = std::string(head.substr(in + 5));
  size_t b = code.find_first_not_of(" \t");
  size_t e = code.find_last_not_of(" \t\r");
  f->code =
      b == std::string_view::npos ? "" : std::string(code.substr(b, e - b + 1));
  return true;
}

std::string FrameHtml(const std::string& text, const StackFrame* f) {
  if (f == nullptr)
    return "<li class=\"frame lib\"><code>" + HtmlEscape(text) + "</code></li>";
  std::string out = std::string("<li class=\"frame ") +
                    (IsLibraryFrame(f->path) ? "lib" : "user") +
                    "\"><span class=\"loc\"><code>" + HtmlEscape(f->path) +
                    ":" + HtmlEscape(f->line) +
                    "</code> in <code class=\"fn\">" + HtmlEscape(f->func) +
                    "</code></span>";
  if (!f->code.empty())
    out += "<pre class=\"src\">" + HtmlEscape(f->code) + "</pre>";
  return out + "</li>";
}

// The frames, innermost first. The innermost frame and the user's own show;
// each run of library frames between them folds into one line that opens.
std::string FramesHtml(const std::vector<std::string>& frames) {
  std::string out = "<ol class=\"frames\">", fold;
  size_t folded = 0;
  auto flush = [&] {
    if (folded == 0) return;
    out += "<li class=\"fold\"><details><summary>" + std::to_string(folded) +
           (folded == 1 ? " library frame" : " library frames") +
           "</summary><ol class=\"frames\">" + fold + "</ol></details></li>";
    fold.clear();
    folded = 0;
  };
  for (size_t i = 0; i < frames.size(); ++i) {
    StackFrame f;
    bool parsed = ParseFrame(frames[i], &f);
    std::string li = FrameHtml(frames[i], parsed ? &f : nullptr);
    if (i > 0 && (!parsed || IsLibraryFrame(f.path))) {
      fold += li;
      ++folded;
      continue;
    }
    flush();
    out += li;
  }
  flush();
  return out + "</ol>";
}

// A module's name under its parent: its path less the parent's ("conv1"
// under "layer1.0"), else the whole path.
std::string ShortName(const CompareResult& r, int32_t n) {
  const std::string& path = r.modules[n].path;
  int32_t up = r.modules[n].parent;
  if (up < 0) return path;
  const std::string& above = r.modules[up].path;
  if (path.size() > above.size() + 1 &&
      path.compare(0, above.size(), above) == 0 && path[above.size()] == '.')
    return path.substr(above.size() + 1);
  return path;
}

}  // namespace

bool IsLibraryFrame(std::string_view path) {
  return Contains(path, "/site-packages/") ||
         Contains(path, "/dist-packages/") || Contains(path, "/lib/python") ||
         path.substr(0, 7) == "<frozen";
}

std::string DivergenceModuleHtml(const CompareResult& r) {
  int32_t m = DivergenceModule(r);
  if (m < 0) return "";
  std::vector<int32_t> chain;
  for (int32_t n = m; n >= 0 && chain.size() <= r.modules.size();
       n = r.modules[n].parent)
    chain.push_back(n);
  std::reverse(chain.begin(), chain.end());
  std::string out =
      "<p id=\"fd-module\" class=\"fd-module\"><span class=\"k\">module"
      "</span> ";
  // A chain deeper than a line shows its top and its last modules.
  constexpr size_t kTop = 3, kLast = 12;
  for (size_t k = 0; k < chain.size(); ++k) {
    if (k == kTop && chain.size() > kTop + kLast + 1) {
      size_t skip = chain.size() - kTop - kLast;
      out += "<span class=\"sep\">&rsaquo;</span><span>\u2026 " +
             std::to_string(skip) + " modules \u2026</span>";
      k += skip - 1;
      continue;
    }
    const ModuleNode& node = r.modules[chain[k]];
    bool last = k + 1 == chain.size();
    if (k > 0) out += "<span class=\"sep\">&rsaquo;</span>";
    out += std::string(last ? "<b" : "<span") + " title=\"" +
           HtmlEscape(node.path) + "\">" + HtmlEscape(ShortName(r, chain[k])) +
           (last ? "</b>" : "</span>");
  }
  const std::string& cls = r.modules[m].cls;
  if (!cls.empty())
    out += " <span class=\"cls\">" + HtmlEscape(cls) + "</span>";
  return out + "</p>";
}

std::string DivergenceStackHtml(const FirstDivergence& fd) {
  if (fd.stack.empty()) return "";
  size_t shown = std::min(fd.stack.size(), kMaxFrames);
  std::string out =
      "<details id=\"fd-stack\" class=\"fd-stack\" open><summary>Call stack "
      "<span class=\"hint\">" +
      std::to_string(fd.stack.size()) +
      " frames from stack.json, innermost first; your code stands "
      "out</span></summary>";
  out += FramesHtml(std::vector<std::string>(
      fd.stack.begin(), fd.stack.begin() + static_cast<ptrdiff_t>(shown)));
  if (shown < fd.stack.size()) {
    out += "<p class=\"hint\">&hellip; and " +
           std::to_string(fd.stack.size() - shown) + " more frames</p>";
  }
  return out + "</details>";
}

}  // namespace lockstep::internal
