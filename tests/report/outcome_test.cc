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

}  // namespace
}  // namespace lockstep
