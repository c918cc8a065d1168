// `lockstep compare` of a generated many-rank statistics dump shared among
// MPI processes, as a user runs it: alone, under `mpirun -n 1` (the
// launcher's own cost) and `mpirun -n 2`, in one session; and, in process,
// what process 0 does with the shares of the others (the cost model of
// docs/compare.md "On a cluster (MPI)"): bytes gathered per row, and the
// decode and merge time per row.
//
//   build/bin/mpi_compare_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// LOCKSTEP_MPI_RANKS (default 16) ranks of LOCKSTEP_MPI_OPS (default 6000)
// compute ops each, written once under LOCKSTEP_MPI_BENCH_DIR (default
// /tmp/lockstep_mpi_bench); LOCKSTEP_MPI_BENCH_ARGS is added to the
// compare's arguments (e.g. "-j 1": one thread per process, as mpirun binds
// each of 2 processes to a core of its own). Ratio to report: the `mpirun -n 2`
// median over the `mpirun -n 1` median. Skips the mpirun runs where mpirun or
// lockstep-mpi is absent.
//
// Each run also reports peak_rss_MiB, the peak resident size of the largest
// process it started (testing::RunWithPeakRss; for `mpirun -n 2`: the larger of
// the two compare processes, normally process 0, which gathers the shares), and
// the program ends by printing that peak under `mpirun -n 2` over the peak
// alone (issue 34 §2's target: 0.6 or less at 8 ranks).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "lockstep/compare/compare_share.h"
#include "testing/proc_status.h"
#include "testing/rank_dumps.h"

namespace {

namespace fs = std::filesystem;
using lockstep::testing::Phase;

long Env(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v ? std::atol(v) : fallback;
}

// The dumps, written on first use.
std::string Dumps() {
  const char* d = std::getenv("LOCKSTEP_MPI_BENCH_DIR");
  std::string dir = d ? d : "/tmp/lockstep_mpi_bench";
  const long ranks = Env("LOCKSTEP_MPI_RANKS", 16),
             ops = Env("LOCKSTEP_MPI_OPS", 6000);
  dir += "/r" + std::to_string(ranks) + "_o" + std::to_string(ops) + "/";
  if (!fs::exists(dir + "baseline")) {
    lockstep::testing::RankProgram p;
    p.ranks = static_cast<int>(ranks);
    p.phases = {{Phase::kCompute, static_cast<int>(ops / 2)},
                {Phase::kAllReduce},
                {Phase::kCompute, static_cast<int>(ops / 2)},
                {Phase::kAllReduce}};
    p.fault_rank = p.ranks - 1;
    p.fault_op = static_cast<int>(ops / 2);
    fs::create_directories(dir);
    lockstep::testing::WriteRankDumps(p, dir);
  }
  return dir;
}

// Peak resident size (MiB) of each launcher's runs, for the closing ratio.
std::map<std::string, double>& Peaks() {
  static std::map<std::string, double> peaks;
  return peaks;
}

void RunCompare(benchmark::State& state, const std::string& launcher) {
  std::string bin = LOCKSTEP_BIN_DIR;
  if (!launcher.empty() && (std::system("command -v mpirun >/dev/null") != 0 ||
                            !fs::exists(bin + "/lockstep-mpi"))) {
    state.SkipWithError("mpirun or lockstep-mpi not found");
    return;
  }
  std::string dir = Dumps();
  const char* args = std::getenv("LOCKSTEP_MPI_BENCH_ARGS");
  std::string cmd = launcher + bin + "/lockstep compare " + dir + "target " +
                    dir + "baseline -o " + dir + "out " + (args ? args : "") +
                    " >/dev/null 2>&1";
  long peak_kb = 0;
  for (auto _ : state) {
    fs::remove_all(dir + "out");
    long kb = 0;
    int code = lockstep::testing::RunWithPeakRss(cmd, &kb);
    peak_kb = std::max(peak_kb, kb);
    if (code != 1)  // the dumps diverge
      state.SkipWithError(
          ("exit " + std::to_string(code) + ": " + cmd).c_str());
  }
  const double mib = static_cast<double>(peak_kb) / 1024.0;
  state.counters["peak_rss_MiB"] = mib;
  double& kept = Peaks()[launcher];
  kept = std::max(kept, mib);
}

std::string Mpirun(int n) {
  return std::string("mpirun") +
         (::geteuid() == 0 ? " --allow-run-as-root" : "") +
         " --oversubscribe -n " + std::to_string(n) + " ";
}

void BM_Alone(benchmark::State& s) { RunCompare(s, ""); }
void BM_Mpirun1(benchmark::State& s) { RunCompare(s, Mpirun(1)); }
void BM_Mpirun2(benchmark::State& s) { RunCompare(s, Mpirun(2)); }

// Process 0's part for the shares of processes 1..P-1 (P = range(0)):
// encode (theirs, measured apart), decode and assemble; counters per row.
void BM_GatherAndMerge(benchmark::State& state) {
  using namespace lockstep;
  const int processes = static_cast<int>(state.range(0));
  std::string dir = Dumps();
  CompareOptions o;
  StatusOr<ComparePlan> plan = PlanCompare(dir + "target", dir + "baseline", o);
  if (!plan.ok()) {
    state.SkipWithError(plan.status().ToString().c_str());
    return;
  }
  std::vector<int> owners = ShareOwners(*plan, processes);
  std::vector<std::string> blobs;
  size_t rows = 0, bytes = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int p = 0; p < processes; ++p) {
    PartialResult part = CompareShare(*plan, owners, p, o, std::nullopt);
    rows += part.rows.size();
    blobs.push_back(EncodePartial(part));
    bytes += blobs.back().size();
  }
  double compare_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  for (auto _ : state) {
    std::vector<PartialResult> shares;
    for (const std::string& b : blobs)
      shares.push_back(std::move(*DecodePartial(b, "bench")));
    StatusOr<CompareResult> r = AssembleShares(*plan, std::move(shares));
    benchmark::DoNotOptimize(r);
  }
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["bytes_per_row"] = static_cast<double>(bytes) / rows;
  state.counters["merge_s_per_row"] = benchmark::Counter(
      static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate |
                                     benchmark::Counter::kInvert);
  state.counters["compare_us_per_row"] = compare_s * 1e6 / rows;
}

BENCHMARK(BM_Alone)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Mpirun1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Mpirun2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GatherAndMerge)
    ->Arg(2)
    ->Arg(8)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const std::map<std::string, double>& peaks = Peaks();
  auto alone = peaks.find(""), two = peaks.find(Mpirun(2));
  if (alone != peaks.end() && two != peaks.end() && alone->second > 0) {
    std::printf(
        "peak resident size, largest process: alone %.0f MiB, mpirun -n 2 "
        "%.0f MiB: ratio %.2f (%ld ranks)\n",
        alone->second, two->second, two->second / alone->second,
        Env("LOCKSTEP_MPI_RANKS", 16));
  }
  return 0;
}
