// Runs `lockstep rng` as a user would: known values and the usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "testing/run_lockstep.h"

namespace {

using lockstep::testing::CmdRun;

CmdRun Rng(const std::string& args) {
  return lockstep::testing::RunLockstep("rng " + args);
}

TEST(RngCliTest, Uint32IsTheRandom123KnownAnswer) {
  // Seed 0, offset 0, block 0 is Philox4x32-10 of counter 0, key 0.
  CmdRun r = Rng("--seed 0 --count 4");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "6627e8d5\ne169c58d\nbc57ac4c\n9b00dbd8\n");
  // --start picks up mid-block.
  EXPECT_EQ(Rng("--seed 0 --start 2 --count 2").out, "bc57ac4c\n9b00dbd8\n");
}

TEST(RngCliTest, FloatsPrintRoundTrip) {
  // The frozen normal bits of philox_test.cc, printed with %.9g.
  CmdRun r = Rng("--seed 2024 --offset 7 --count 3 --dist normal");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "-0.910660982\n1.31143045\n-0.185379967\n");
  // Uniform: (0x6627e8d5 >> 8) * 2^-24 = 0x6627e8 / 2^24.
  r = Rng("--seed 0 --count 1 --dist uniform");
  EXPECT_EQ(r.out, "0.399046421\n");
  EXPECT_EQ(Rng("--seed 5 --count 3 --dist bernoulli --p 1").out, "1\n1\n1\n");
  EXPECT_EQ(Rng("--seed 5 --count 0").out, "");
}

TEST(RngCliTest, UsageErrorsExitTwo) {
  const char* kBad[] = {
      "--count 3",                                        // no seed
      "--seed 1",                                         // no count
      "--seed -1 --count 3",                              // negative seed
      "--seed 1 --count -3",                              // negative count
      "--seed 1 --count 1000000001",                      // over the bound
      "--seed 1 --count 2 --dist gauss",                  // unknown dist
      "--seed 1 --count 2 --dist bernoulli --p 2",        // p out of range
      "--seed 1 --count 2 --start 18446744073709551615",  // wraps
      "--seed x --count 2",
  };
  for (const char* args : kBad) {
    CmdRun r = Rng(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("[E] rng"), std::string::npos) << args << r.out;
  }
  EXPECT_EQ(Rng("--help").code, 0);
}

}  // namespace
