// The HTML report's "Across ranks" card (dumps of several ranks): the origin
// of the divergence and the collectives that carried it, and a heat grid of
// the worst error per (step, rank), one row of cells per step. Rendered
// without script: each cell links to its worst row (#row=N).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "html_internal.h"
#include "lockstep/report/outcome.h"

namespace lockstep::internal {
namespace {

// Listed hops at most (the summary JSON has them all).
constexpr size_t kMaxListedHops = 64;

struct RankWorst {
  int severity = -1;
  double error = 0;  // the largest known row error
  size_t row = 0;    // the first row of the most severe verdict
};

std::map<std::pair<int, int>, RankWorst> WorstPerRank(const CompareResult& r) {
  std::map<std::pair<int, int>, RankWorst> out;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const CompareRow& row = r.rows[i];
    RankWorst& w = out[{row.step, row.rank}];
    int s = Severity(row.verdict);
    if (s > w.severity) {
      w.severity = s;
      w.row = i;
    }
    if (!std::isnan(row.error)) w.error = std::max(w.error, row.error);
  }
  return out;
}

const char* VerdictClass(int severity) {
  static const Verdict kBySeverity[] = {Verdict::kPass, Verdict::kUnmatched,
                                        Verdict::kWarning, Verdict::kError};
  for (Verdict v : kBySeverity)
    if (Severity(v) == severity) return VerdictName(v);
  return "pass";
}

// 0.25 .. 1 from the error's decade (1e-6 and below .. 1 and above).
double Intensity(double error) {
  if (!(error > 0)) return 0.25;
  double d = std::clamp(std::log10(error), -6.0, 0.0);
  return 0.25 + 0.75 * (d + 6) / 6;
}

std::string Cell(int step, int rank, const RankWorst& w,
                 const std::string& mark) {
  char err[32], alpha[16];
  std::snprintf(err, sizeof(err), "%.3g", w.error);
  std::snprintf(alpha, sizeof(alpha), "%.2f", Intensity(w.error));
  std::string cls = std::string("hc v-") + VerdictClass(w.severity) + mark;
  std::string title = "rank " + std::to_string(rank) + ", step " +
                      std::to_string(step) + ": " + VerdictClass(w.severity) +
                      ", largest error " + err;
  if (mark == " origin") title += " (the origin)";
  if (mark == " reached") title += " (reached from the origin)";
  return "<a class=\"" + cls + "\" style=\"--a:" + alpha +
         "\" href=\"#row=" + std::to_string(w.row + 1) + "\" title=\"" +
         HtmlEscape(title) + "\"></a>";
}

std::string HeatGrid(const CompareResult& r) {
  std::set<int> reached;
  for (const OriginHop& h : r.origin.path) reached.insert(h.rank);
  std::string out = "<div class=\"heat\" id=\"rank-heat\">";
  int step = INT32_MIN;
  for (const auto& [at, w] : WorstPerRank(r)) {
    if (at.first != step) {
      if (step != INT32_MIN) out += "</div>";
      step = at.first;
      out += "<span class=\"hstep\">step " + std::to_string(step) +
             "</span><div class=\"cells\">";
    }
    const RankOrigin& o = r.origin;
    std::string mark = o.found && o.rank == at.second && o.step == at.first
                           ? " origin"
                       : reached.count(at.second) ? " reached"
                                                  : "";
    out += Cell(at.first, at.second, w, mark);
  }
  if (step != INT32_MIN) out += "</div>";
  return out + "</div>";
}

std::string HopsList(const RankOrigin& o) {
  if (o.path.empty()) return "";
  std::string out = "<details class=\"hops\"><summary>" +
                    std::to_string(o.path.size()) +
                    (o.path.size() == 1 ? " rank" : " ranks") +
                    " reached, in order</summary><ol>";
  for (size_t i = 0; i < o.path.size() && i < kMaxListedHops; ++i) {
    const OriginHop& h = o.path[i];
    out += "<li>rank " + std::to_string(h.rank) + " from rank " +
           std::to_string(h.from) + " through <code>" + HtmlEscape(h.entry) +
           "</code></li>";
  }
  out += "</ol>";
  if (o.path.size() > kMaxListedHops) {
    out += "<p class=\"hint\">&hellip; and " +
           std::to_string(o.path.size() - kMaxListedHops) +
           " more (all are in the summary JSON).</p>";
  }
  return out + "</details>";
}

}  // namespace

std::string RanksCardHtml(const CompareResult& r) {
  const RankOrigin& o = r.origin;
  if (!o.analyzed) return "";
  std::string out = std::string("<section id=\"ranks\" class=\"card fd ") +
                    (o.found ? "found" : "none") +
                    "\"><div class=\"card-head\"><h2>Across ranks</h2><span "
                    "class=\"hint\">the worst row of each rank and step; "
                    "outlined: the origin, dotted: the ranks it "
                    "reached</span></div>";
  if (o.found) {
    out += "<p class=\"fd-detail\" id=\"origin-line\">" +
           HtmlEscape(OriginLine(o)) + "</p>";
    out += HopsList(o);
  } else {
    out +=
        "<p class=\"fd-detail\" id=\"origin-line\">No rank diverged on its "
        "own.</p>";
  }
  return out + HeatGrid(r) + "</section>\n";
}

}  // namespace lockstep::internal
