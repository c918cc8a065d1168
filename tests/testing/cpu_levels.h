// Runs a check on every kernel path (numerics/cpu_features.h's CpuLevel)
// that this CPU has, with CpuLevelLimit() set to each in turn: the one way
// the tests reach the portable, AVX2 and AVX-512 paths of every kernel that
// dispatches (statistics, pair metrics, half conversion, CRC-32, the grad
// scaler's), each against the same reference.
#ifndef LOCKSTEP_TESTS_TESTING_CPU_LEVELS_H_
#define LOCKSTEP_TESTS_TESTING_CPU_LEVELS_H_

#include <gtest/gtest.h>

#include <string>

#include "lockstep/numerics/cpu_features.h"

namespace lockstep::testing {

// Calls fn(level) for each level up to HostCpuLevel(), slowest first, with
// the limit set to it and the level named in failures; then restores the
// limit. Returns how many levels ran (at least 1: portable).
template <typename Fn>
int ForEachCpuLevel(const Fn& fn) {
  const CpuLevel was = CpuLevelLimit();
  int ran = 0;
  for (CpuLevel level : kAllCpuLevels) {
    if (static_cast<int>(level) > static_cast<int>(HostCpuLevel())) break;
    SetCpuLevelLimit(level);
    SCOPED_TRACE(std::string("kernel path ") + CpuLevelName(level));
    fn(level);
    ++ran;
  }
  SetCpuLevelLimit(was);
  return ran;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_CPU_LEVELS_H_
