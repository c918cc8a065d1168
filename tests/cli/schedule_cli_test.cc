// Runs `lockstep schedule` as a user would: the CSV/JSON output, the plot,
// and the refusals of invalid configurations (exit 2 naming the value).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/run_lockstep.h"

namespace {

using lockstep::testing::CmdRun;

CmdRun Schedule(const std::string& args) {
  return lockstep::testing::RunLockstep("schedule " + args);
}

// The lines of `s`.
std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(ScheduleCliTest, CosineDecayCsvRunsThroughTheLastStepExactly) {
  CmdRun r =
      Schedule("cosine-decay --max-lr 1e-5 --min-lr 0 --decay-steps 1000");
  ASSERT_EQ(r.code, 0) << r.out;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1002u);  // header + steps 0..1000
  EXPECT_EQ(lines[0], "step,lr");
  EXPECT_EQ(lines[1], "0,1e-05");
  EXPECT_EQ(lines[501], "500,5e-06");  // the midpoint is exact
  EXPECT_EQ(lines[1001], "1000,0");    // min_lr, not -4e-6
  for (size_t i = 1; i < lines.size(); ++i) {
    double lr = std::stod(lines[i].substr(lines[i].find(',') + 1));
    ASSERT_TRUE(lr >= 0 && lr <= 1e-5) << lines[i];
  }
}

TEST(ScheduleCliTest, StepsEveryAndJson) {
  CmdRun r = Schedule(
      "piecewise --boundaries 2,5 --values 0.1,0.05,0.01 --steps 7 --every 2");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "step,lr\n0,0.1\n2,0.05\n4,0.05\n6,0.01\n");
  r = Schedule(
      "exponential --max-lr 1 --decay-rate 0.5 --decay-steps 10 "
      "--steps 21 --every 10 --format json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out,
            "{\"schedule\":\"exponential\",\"floor\":0,\"peak\":1,\"points\":["
            "{\"step\":0,\"lr\":1},{\"step\":10,\"lr\":0.5},"
            "{\"step\":20,\"lr\":0.25}]}\n");
}

// CosineAnnealingWarmRestarts(T_0=1, T_mult=3).step(121) gives eta_min in
// torch 1.13; step 121 starts cycle 5, at the base lr.
TEST(ScheduleCliTest, RestartBoundaryWherePyTorchMissesIsAtMaxLr) {
  CmdRun r = Schedule(
      "cosine-restarts --max-lr 1 --period 1 --period-mult 3 --steps 122");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(Lines(r.out).back(), "121,1");
}

TEST(ScheduleCliTest, PlotWritesAnSvg) {
  std::string dir = ::testing::TempDir() + "schedule_cli_plot/sub";
  std::filesystem::remove_all(dir);
  CmdRun r = Schedule("one-cycle --max-lr 0.1 --total-steps 100 --plot " + dir +
                      "/lr.svg");
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(dir + "/lr.svg");
  std::stringstream svg;
  svg << in.rdbuf();
  EXPECT_EQ(svg.str().rfind("<svg", 0), 0u);
  EXPECT_NE(svg.str().find("lockstep schedule one-cycle"), std::string::npos);
}

TEST(ScheduleCliTest, InvalidConfigurationsExitTwoNamingTheValue) {
  struct Case {
    const char* args;
    const char* want;
  };
  const Case kCases[] = {
      {"cosine-decay --max-lr 1e-3 --min-lr 1e-2 --decay-steps 10",
       "min_lr 0.01 is not below max_lr 0.001"},
      {"cosine-decay --max-lr 1e-3 --min-lr 1e-3 --decay-steps 10",
       "min_lr 0.001 is not below max_lr 0.001"},
      {"cosine-decay --max-lr nan --decay-steps 10", "max_lr nan must be"},
      {"cosine-decay --max-lr 1 --min-lr nan --decay-steps 10", "min_lr nan"},
      {"cosine-decay --max-lr 1 --decay-steps -10", "decay_steps -10 must be"},
      {"cosine-decay --max-lr 1 --decay-steps 10 --steps -4", "--steps -4"},
      {"cosine-decay --max-lr 1 --decay-steps 10 --every 0", "--every 0"},
      {"cosine-decay --decay-steps 10", "--max-lr is required"},
      {"cosine-decay --max-lr 1 --decay-steps 10 --warmup-steps 5",
       "option --warmup-steps does not apply"},
      {"linear-warmup --max-lr 1 --warmup-steps 10 --total-steps 10",
       "total_steps 10 must be >= 11"},
      {"cosine-restarts --max-lr 1 --period 3", "has no last step"},
      {"one-cycle --max-lr 1 --total-steps 3", "phase of zero"},
      {"wsd --max-lr 1 --decay-steps 3 --decay-shape cubic", "shape 'cubic'"},
      {"piecewise --boundaries 5,2 --values 1,2,3", "boundary 2 must be"},
      {"warmup --max-lr 1", "known schedules: cosine-decay"},
      {"cosine-decay --max-lr 1 --decay-steps 10 --format xml", "--format"},
  };
  for (const Case& c : kCases) {
    CmdRun r = Schedule(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find("[E] schedule"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(c.want), std::string::npos)
        << c.args << ": want '" << c.want << "' in\n"
        << r.out;
  }
  EXPECT_EQ(Schedule("--help").code, 0);
}

}  // namespace
