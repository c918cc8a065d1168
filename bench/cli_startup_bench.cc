// Start-up of the CLI: `lockstep --help` (no LibTorch) against
// `lockstep-torch --help` (the same kind of program, linking LibTorch), each
// a fork + exec + wait, in one run. Counter rss_KB: the program's peak RSS,
// measured once through GNU time (/usr/bin/time -f %M): a child forked from
// this process would report this process's own RSS as its peak.
//
//   build/bin/cli_startup_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

// Runs `path` --help with stdout and stderr to /dev/null; returns the
// child's peak RSS in KB (-1 on failure).
long RunOnce(const std::string& path) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execl(path.c_str(), path.c_str(), "--help", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) return -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return usage.ru_maxrss;
}

// The peak RSS (KB) of `path` --help by GNU time, or -1.
long PeakRssKb(const std::string& path) {
  if (::access("/usr/bin/time", X_OK) != 0) return -1;
  std::string cmd = "/usr/bin/time -f %M " + path + " --help 2>&1 >/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return -1;
  long kb = -1;
  if (std::fscanf(p, "%ld", &kb) != 1) kb = -1;
  ::pclose(p);
  return kb;
}

void Run(benchmark::State& state, const std::string& name) {
  std::string path = std::string(LOCKSTEP_BIN_DIR) + "/" + name;
  if (::access(path.c_str(), X_OK) != 0) {
    state.SkipWithError((path + " not built").c_str());
    return;
  }
  for (auto _ : state) {
    if (RunOnce(path) < 0)
      state.SkipWithError(("running " + path + " failed").c_str());
  }
  state.counters["rss_KB"] = static_cast<double>(PeakRssKb(path));
}

void BM_LockstepHelp(benchmark::State& state) { Run(state, "lockstep"); }
BENCHMARK(BM_LockstepHelp)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LockstepTorchHelp(benchmark::State& state) {
  Run(state, "lockstep-torch");
}
BENCHMARK(BM_LockstepTorchHelp)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
