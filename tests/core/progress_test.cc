#include "lockstep/core/progress.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(ProgressTest, BarCountPercentAndEta) {
  // 30% done after 6 s: 14 s to go.
  EXPECT_EQ(FormatProgress(30, 100, 6.0, "rows", 10),
            "[###.......] 30/100 rows 30% ETA 0:14");
  EXPECT_EQ(FormatProgress(0, 8, 0.0, "ops", 4), "[....] 0/8 ops 0% ETA ?");
  EXPECT_EQ(FormatProgress(8, 8, 9.0, "ops", 4), "[####] 8/8 ops 100%");
  // No bar for width 0 (log lines); hours when the rest is long.
  EXPECT_EQ(FormatProgress(1, 1000, 10.0, "rows", 0),
            "1/1000 rows 0% ETA 2:46:30");
  // More done than the total (a caller's rounding) is clamped.
  EXPECT_EQ(FormatProgress(12, 10, 1.0, "rows", 2), "[##] 10/10 rows 100%");
  EXPECT_EQ(FormatProgress(0, 0, 0.0, "rows", 2), "[##] 0/0 rows 100%");
}

// Not on a terminal (as under ctest), short work prints nothing.
TEST(ProgressTest, ShortWorkOffATerminalIsSilent) {
  ::testing::internal::CaptureStderr();
  {
    Progress p("compare", "rows");
    for (size_t i = 0; i <= 1000; ++i) p.Update(i, 1000);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace lockstep
