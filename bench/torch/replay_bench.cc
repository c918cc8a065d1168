// lockstep replay's speed: a LeNet tensor dump (bin/lenet, one step, made
// once per process) replayed whole, forward and backward entries, with 1 and
// 2 jobs. Counters: entries per second and the checks made. The ratio to
// report is jobs 2 against jobs 1 in one run; the absolute time says how
// long a user waits per entry (each is re-run up to three times on the
// CPU: float64, float64 on |inputs|, the recorded dtype).
//
//     build/bin/replay_bench --benchmark_repetitions=5
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "lockstep/torch/replay.h"

namespace {

namespace fs = std::filesystem;

// The dump, made on first use; "" if bin/lenet failed.
const std::string& LenetDump() {
  static const std::string dir = [] {
    std::string d = (fs::temp_directory_path() /
                     ("lockstep_replay_bench_" + std::to_string(::getpid())))
                        .string();
    fs::remove_all(d);
    std::string cmd = std::string(LOCKSTEP_BIN_DIR) +
                      "/lenet --steps 1 --seed 1 --task tensor --dump " + d +
                      " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return std::string();
    std::atexit([] {
      fs::remove_all(fs::temp_directory_path() /
                     ("lockstep_replay_bench_" + std::to_string(::getpid())));
    });
    return d;
  }();
  return dir;
}

void BM_ReplayLenet(benchmark::State& state) {
  const std::string& dump = LenetDump();
  if (dump.empty()) {
    state.SkipWithError("bin/lenet could not dump");
    return;
  }
  lockstep::ReplayOptions o;
  o.dump = dump;
  o.jobs = static_cast<int>(state.range(0));
  // 1: in a child process with a time limit (the default); 0: in this one.
  o.max_call_seconds = state.range(1) != 0 ? 60 : 0;
  at::set_num_threads(o.jobs > 1 ? 1 : 2);
  size_t entries = 0, checks = 0;
  for (auto _ : state) {
    lockstep::StatusOr<lockstep::ReplayResult> r = lockstep::ReplayDump(o);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    entries = r->entries;
    checks = r->checks.size();
  }
  state.counters["entries_per_s"] =
      benchmark::Counter(static_cast<double>(entries) * state.iterations(),
                         benchmark::Counter::kIsRate);
  state.counters["checks"] = static_cast<double>(checks);
}
BENCHMARK(BM_ReplayLenet)
    ->ArgNames({"jobs", "isolated"})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
