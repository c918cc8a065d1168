#include "lockstep/numerics/cpu_features.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lockstep
