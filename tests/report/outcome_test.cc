#include "lockstep/report/outcome.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

CompareResult WithCounts(int64_t pass, int64_t warning, int64_t error,
                         int64_t unmatched) {
  CompareResult r;
  r.summary = {pass + warning + error + unmatched,
               pass,
               warning,
               error,
               unmatched,
               0,
               0,
               0};
  return r;
}

TEST(OutcomeTest, AllPass) {
  CompareResult r = WithCounts(10, 0, 0, 0);
  EXPECT_EQ(OverallOutcome(r), Outcome::kPass);
  EXPECT_EQ(VerdictLine(r), "PASS: 10 rows, all pass");
  EXPECT_EQ(VerdictLine(CompareResult()), "PASS: 0 rows, all pass");
}

TEST(OutcomeTest, WarningsAndUnmatchedRowsWarn) {
  EXPECT_EQ(OverallOutcome(WithCounts(8, 2, 0, 0)), Outcome::kWarning);
  CompareResult r = WithCounts(8, 0, 0, 3);
  EXPECT_EQ(OverallOutcome(r), Outcome::kWarning);
  EXPECT_EQ(VerdictLine(r),
            "WARNING: no divergence; 3 unmatched, 8 pass of 11 rows");
}

TEST(OutcomeTest, ErrorsOrADivergenceFail) {
  CompareResult r = WithCounts(5, 1, 2, 0);
  EXPECT_EQ(OverallOutcome(r), Outcome::kFail);
  EXPECT_EQ(
      VerdictLine(r),
      "FAIL: no first divergence found; 2 error, 1 warning, 5 pass of 8 rows");
  r.first_divergence = {true,
                        1,
                        3,
                        "Functional.conv2d.0.forward",
                        "Functional.conv2d.0.forward.output.0",
                        DivergenceReason::kOverflow,
                        "inf in output",
                        4};
  EXPECT_EQ(VerdictLine(r),
            "FAIL: first divergence at Functional.conv2d.0.forward (rank 1, "
            "step 3): overflow; "
            "2 error, 1 warning, 5 pass of 8 rows");
  r.first_divergence.step = -1;
  EXPECT_NE(VerdictLine(r).find("(rank 1): overflow"), std::string::npos);
  EXPECT_STREQ(OutcomeName(Outcome::kFail), "fail");
}

TEST(OriginLineTest, GroupsHopsByCollective) {
  RankOrigin o;
  EXPECT_EQ(OriginLine(o), "");
  o.found = true;
  o.rank = 2;
  o.step = 0;
  o.entry = "Functional.linear.1.forward";
  o.reason = DivergenceReason::kPrecision;
  EXPECT_EQ(OriginLine(o),
            "origin: rank 2, step 0, Functional.linear.1.forward "
            "(precision); reached no other rank");
  for (int r = 3; r < 6; ++r)
    o.path.push_back({r, 0, "Distributed.recv.0.forward", r - 1});
  o.path.push_back({0, 0, "Distributed.all_reduce.0.forward", 2});
  o.others.push_back({7, 0, "Functional.linear.0.forward", 7});
  EXPECT_EQ(
      OriginLine(o),
      "origin: rank 2, step 0, Functional.linear.1.forward "
      "(precision); reached ranks 3..5 through Distributed.recv.0.forward "
      "from ranks 2..4; rank 0 through Distributed.all_reduce.0.forward "
      "from rank 2; 1 other rank diverged on its own (7)");
}

// A path through many collectives names the first 4 and counts the rest.
TEST(OriginLineTest, ManyCollectivesAreCounted) {
  RankOrigin o;
  o.found = true;
  o.entry = "Functional.linear.0.forward";
  o.step = 0;
  for (int r = 1; r <= 6; ++r) {
    o.path.push_back(
        {r, 0, "Distributed.send.0.forward." + std::to_string(r), 0});
  }
  std::string line = OriginLine(o);
  EXPECT_NE(line.find("; 2 more through 2 other collectives"),
            std::string::npos)
      << line;
}

}  // namespace
}  // namespace lockstep
