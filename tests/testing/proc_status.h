// Memory as Linux reports it, for tests and benchmarks that bound what a
// piece of work keeps resident: this process's (a /proc/self/status line,
// and the reset of the peak, VmHWM, so that the peak of one piece of work
// can be read), and a command's peak.
#ifndef LOCKSTEP_TESTS_TESTING_PROC_STATUS_H_
#define LOCKSTEP_TESTS_TESTING_PROC_STATUS_H_

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

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

// Runs `command` with /bin/sh; returns its exit code (-1 when it did not
// exit normally) and sets *peak_kb to the peak resident size of the largest
// process it started (wait4's rusage of the shell counts it and every
// descendant reaped: the command itself, or each process under mpirun).
inline int RunWithPeakRss(const std::string& command, long* peak_kb) {
  *peak_kb = -1;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", command.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru;
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid) return -1;
  *peak_kb = ru.ru_maxrss;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_PROC_STATUS_H_
