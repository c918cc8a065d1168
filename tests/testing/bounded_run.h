// Runs a piece of a test in a child process under a memory limit, so that a
// test can assert that hostile input ends in an error and not in
// std::bad_alloc, a kernel kill or gigabytes of memory: the child's exit
// code, its peak memory and one line it sends back.
#ifndef LOCKSTEP_TESTS_TESTING_BOUNDED_RUN_H_
#define LOCKSTEP_TESTS_TESTING_BOUNDED_RUN_H_

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace lockstep::testing {

struct BoundedRun {
  bool exited = false;  // false: killed by a signal (SIGABRT for bad_alloc)
  int code = -1;        // exit code when exited
  int signal = 0;       // the signal otherwise
  uint64_t peak_rss_bytes = 0;
  std::string line;  // what the child passed to its `say` callback
};

// Whether this is built with AddressSanitizer (gcc or clang).
inline constexpr bool UnderAddressSanitizer() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}

// Whether address-space limits can be set: not under AddressSanitizer,
// which reserves terabytes of shadow memory.
inline bool CanLimitAddressSpace() { return !UnderAddressSanitizer(); }

// What AddressSanitizer adds to a process's peak memory: its quarantine
// holds up to 256 MiB of freed blocks (quarantine_size_mb), its shadow an
// eighth of what is touched, and redzones surround every block. A bound on
// BoundedRun::peak_rss_bytes allows this much more.
inline uint64_t SanitizerRssBytes() {
  return UnderAddressSanitizer() ? uint64_t{384} << 20 : 0;
}

// The process's address space now, in bytes (0 when unknown).
inline uint64_t AddressSpaceBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long pages = 0;
  int n = std::fscanf(f, "%lu", &pages);
  std::fclose(f);
  return n == 1 ? pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

// Forks; the child limits its address space to `extra_bytes` beyond what it
// has (where CanLimitAddressSpace), runs `fn(say)` and exits with its
// result. `say(text)` sends text back (BoundedRun::line). The parent waits.
template <typename F>
BoundedRun RunBounded(uint64_t extra_bytes, F fn) {
  BoundedRun r;
  int fds[2];
  if (::pipe(fds) != 0) return r;
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    if (CanLimitAddressSpace()) {
      rlimit lim;
      lim.rlim_cur = lim.rlim_max = AddressSpaceBytes() + extra_bytes;
      ::setrlimit(RLIMIT_AS, &lim);
    }
    auto say = [&](const std::string& text) {
      size_t off = 0;
      while (off < text.size()) {
        ssize_t w = ::write(fds[1], text.data() + off, text.size() - off);
        if (w <= 0) break;
        off += static_cast<size_t>(w);
      }
    };
    int code = fn(say);
    ::close(fds[1]);
    ::_exit(code);
  }
  ::close(fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof(buf))) > 0)
    r.line.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  rusage usage{};
  if (::wait4(pid, &status, 0, &usage) != pid) return r;
  r.exited = WIFEXITED(status);
  r.code = r.exited ? WEXITSTATUS(status) : -1;
  r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  r.peak_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;
  return r;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_BOUNDED_RUN_H_
