#include "lockstep/numerics/cpu_features.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "testing/run_lockstep.h"

namespace lockstep {
namespace {

// The kernel's view of the CPU: the "flags" line of /proc/cpuinfo. Empty
// where there is no such file (not Linux) or no flags line (not x86).
std::set<std::string> ProcCpuFlags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

TEST(CpuFeaturesTest, AgreesWithProcCpuinfo) {
  std::set<std::string> flags = ProcCpuFlags();
  if (flags.empty()) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  CpuFeatures f = DetectCpuFeatures();
  EXPECT_EQ(f.f16c, flags.count("f16c") == 1);
  EXPECT_EQ(f.fma, flags.count("fma") == 1);
  EXPECT_EQ(f.avx2, flags.count("avx2") == 1);
}

TEST(CpuFeaturesTest, HostFeaturesAreTheDetectedOnes) {
  CpuFeatures now = DetectCpuFeatures();
  const CpuFeatures& host = HostCpuFeatures();
  EXPECT_EQ(host.avx2, now.avx2);
  EXPECT_EQ(host.fma, now.fma);
  EXPECT_EQ(host.f16c, now.f16c);
  EXPECT_EQ(&host, &HostCpuFeatures());  // asked once
}

TEST(CpuLevelTest, NamesRoundTrip) {
  for (CpuLevel l : kAllCpuLevels) EXPECT_EQ(ParseCpuLevel(CpuLevelName(l)), l);
  EXPECT_EQ(ParseCpuLevel("AVX2"), std::nullopt);
  EXPECT_EQ(ParseCpuLevel(""), std::nullopt);
  EXPECT_EQ(ParseCpuLevel("avx512 "), std::nullopt);
}

TEST(CpuLevelTest, HostLevelFollowsTheFeatures) {
  const CpuFeatures& f = HostCpuFeatures();
  CpuLevel h = HostCpuLevel();
  EXPECT_EQ(h != CpuLevel::kPortable, f.avx2 && f.fma && f.f16c && f.pclmul);
  EXPECT_EQ(h == CpuLevel::kAvx512, h != CpuLevel::kPortable && f.avx512_clmul);
}

TEST(CpuLevelTest, TheLimitIsSetAndAllowsLevelsUpToIt) {
  CpuLevel was = SetCpuLevelLimit(CpuLevel::kAvx2);
  EXPECT_TRUE(CpuLevelAllowed(CpuLevel::kPortable));
  EXPECT_TRUE(CpuLevelAllowed(CpuLevel::kAvx2));
  EXPECT_FALSE(CpuLevelAllowed(CpuLevel::kAvx512));
  EXPECT_EQ(SetCpuLevelLimit(CpuLevel::kPortable), CpuLevel::kAvx2);
  EXPECT_FALSE(CpuLevelAllowed(CpuLevel::kAvx2));
  SetCpuLevelLimit(was);
}

TEST(CpuLevelTest, ActiveIsWhatTheCpuHasWithinTheLimit) {
  const CpuLevel was = CpuLevelLimit();
  for (CpuLevel limit : kAllCpuLevels) {
    SetCpuLevelLimit(limit);
    for (CpuLevel l : kAllCpuLevels) {
      EXPECT_EQ(CpuLevelActive(l),
                static_cast<int>(l) <= static_cast<int>(HostCpuLevel()) &&
                    static_cast<int>(l) <= static_cast<int>(limit))
          << CpuLevelName(l) << " under " << CpuLevelName(limit);
    }
  }
  SetCpuLevelLimit(was);
}

// Prints the limit; the next test runs it alone in a child process, with
// LOCKSTEP_CPU_LEVEL set.
TEST(CpuLevelTest, PrintsTheLimit) {
  std::printf("limit=%s\n", CpuLevelName(CpuLevelLimit()));
}

// What this test program, started again with LOCKSTEP_CPU_LEVEL=`value`,
// prints (stdout and stderr).
std::string ChildOutput(const std::string& value) {
  // This program's path (in the shell, /proc/self/exe is the shell).
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  return testing::RunCommand("LOCKSTEP_CPU_LEVEL='" + value + "' " + self +
                             " --gtest_filter=CpuLevelTest.PrintsTheLimit")
      .out;
}

TEST(CpuLevelTest, TheEnvironmentSetsTheFirstLimit) {
  EXPECT_NE(ChildOutput("portable").find("limit=portable"), std::string::npos);
  EXPECT_NE(ChildOutput("avx2").find("limit=avx2"), std::string::npos);
  std::string bad = ChildOutput("fast");
  EXPECT_NE(bad.find("limit=avx512"), std::string::npos) << bad;
  EXPECT_NE(bad.find("LOCKSTEP_CPU_LEVEL=fast: not portable, avx2 or avx512"),
            std::string::npos)
      << bad;
}

}  // namespace
}  // namespace lockstep
