// The replay report page: the compare report's look (its style sheet,
// header, verdict line and cards), and a verdict that is never a pass
// when nothing was replayed.
#include "lockstep/report/replay_report.h"

#include <gtest/gtest.h>

#include <string>

namespace lockstep {
namespace {

ReplayCheck Check(const std::string& entry, ReplayVerdict verdict) {
  ReplayCheck c;
  c.step = 0;
  c.entry = entry;
  c.tensor = "output.0";
  c.op = "aten::gelu";
  c.dtype = "torch.float32";
  c.kind = "elementwise";
  c.max_ulp = verdict == ReplayVerdict::kSuspect ? 4096 : 1;
  c.bound = 4;
  c.bound_rule = "4 ulp: elementwise";
  c.verdict = verdict;
  if (verdict == ReplayVerdict::kSuspect) c.reason = "4096 ulp > 4";
  return c;
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(ReplayReportTest, HasTheCompareReportsLook) {
  ReplayResult r;
  r.dump = "runs/<gpu>";
  r.checks = {Check("Functional.gelu.0.forward", ReplayVerdict::kOk),
              Check("Functional.gelu.1.forward", ReplayVerdict::kSuspect)};
  r.first_suspect = 1;
  r.entries = r.replayed = 2;
  r.suspect = 1;
  std::string h = ReplayHtml(r);
  // The compare report's style sheet and structure.
  EXPECT_NE(h.find(".verdict.o-fail"), std::string::npos);
  EXPECT_NE(h.find("<header class=\"top\"><div class=\"brand\">lockstep "
                   "<span>replay report</span>"),
            std::string::npos);
  EXPECT_NE(h.find("<dd>runs/&lt;gpu&gt;</dd>"), std::string::npos);
  EXPECT_NE(h.find("<p id=\"verdict\" class=\"verdict o-fail\">FAIL: first "
                   "suspect Functional.gelu.1.forward output.0"),
            std::string::npos);
  EXPECT_NE(h.find("id=\"first-suspect\" class=\"card fd found\""),
            std::string::npos);
  EXPECT_EQ(Count(h, "<tr class=\"v-error\">"), 2u);  // suspects, every check
  EXPECT_EQ(Count(h, "<section"), Count(h, "</section>"));
  EXPECT_EQ(Count(h, "<table"), Count(h, "</table>"));
  EXPECT_NE(h.find("</main></body></html>"), std::string::npos);
}

TEST(ReplayReportTest, NothingReplayedIsNoVerdictNotAPass) {
  ReplayResult r;
  r.dump = "stats_dump";
  r.entries = 5;
  r.not_replayable = 5;
  std::string h = ReplayHtml(r);
  EXPECT_NE(h.find("class=\"verdict o-warning\">No verdict: no call was "
                   "replayed"),
            std::string::npos);
  EXPECT_EQ(h.find("PASS"), std::string::npos);
  EXPECT_EQ(h.find("first-suspect"), std::string::npos);
  // With a replayed call within its bound, it passes.
  r.checks = {Check("Functional.gelu.0.forward", ReplayVerdict::kOk)};
  r.replayed = 1;
  EXPECT_NE(ReplayHtml(r).find("class=\"verdict o-pass\">PASS: no suspect"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
