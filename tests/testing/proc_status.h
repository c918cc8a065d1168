// This process's memory as Linux reports it, for tests and benchmarks that
// bound what a piece of work keeps resident: a /proc/self/status line, and
// the reset of the peak (VmHWM) so that the peak of one piece of work can
// be read.
#ifndef LOCKSTEP_TESTS_TESTING_PROC_STATUS_H_
#define LOCKSTEP_TESTS_TESTING_PROC_STATUS_H_

#include <cstdio>
#include <cstring>

namespace lockstep::testing {

// A "<key> <n> kB" line of /proc/self/status (key "VmRSS:", "VmHWM:"), in
// MiB; -1 when there is no such file or line.
inline double ProcStatusMiB(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  double kb = -1024;
  const size_t k = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, k) == 0 &&
        std::sscanf(line + k, " %lf", &kb) == 1)
      break;
  }
  std::fclose(f);
  return kb / 1024.0;
}

// Resets the peak resident size (VmHWM) to the present one
// (/proc/self/clear_refs, Linux 4.0). False when that cannot be done.
inline bool ResetPeakRss() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_PROC_STATUS_H_
