// The origin across ranks at 512 ranks (tests/testing/rank_dumps.h: compute,
// all_reduce in groups of 8, compute, all_reduce over all; rank 300
// faulted): the whole compare of the two dump roots, and the origin
// analysis alone on its rows (FindRankOrigin). The dumps are written once
// under LOCKSTEP_RANKS_DIR (default /tmp/lockstep_rank_origin_bench).
//
//   build/bin/rank_origin_bench
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "lockstep/compare/compare_dumps.h"
#include "lockstep/compare/rank_origin.h"
#include "testing/rank_dumps.h"

namespace {

using lockstep::testing::Phase;

std::string Dumps(int ranks) {
  const char* d = std::getenv("LOCKSTEP_RANKS_DIR");
  std::string dir = std::string(d ? d : "/tmp/lockstep_rank_origin_bench") +
                    "/r" + std::to_string(ranks);
  if (!std::filesystem::exists(dir + "/baseline")) {
    lockstep::testing::RankProgram p;
    p.ranks = ranks;
    p.phases = {{Phase::kCompute, 8},
                {Phase::kAllReduce, 1, 8},
                {Phase::kCompute, 8},
                {Phase::kAllReduce}};
    p.fault_rank = ranks * 300 / 512;
    p.fault_op = 9;
    lockstep::testing::WriteRankDumps(p, dir);
  }
  return dir;
}

void BM_CompareRanks(benchmark::State& state) {
  std::string dir = Dumps(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto r = lockstep::CompareDumpPaths(dir + "/target", dir + "/baseline",
                                        lockstep::CompareOptions());
    if (!r.ok() || !r->origin.found) state.SkipWithError("no origin");
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_CompareRanks)->Arg(512)->Unit(benchmark::kMillisecond);

void BM_FindRankOrigin(benchmark::State& state) {
  std::string dir = Dumps(static_cast<int>(state.range(0)));
  auto r = lockstep::CompareDumpRows(dir + "/target", dir + "/baseline",
                                     lockstep::CompareOptions());
  if (!r.ok()) {
    state.SkipWithError("compare failed");
    return;
  }
  for (auto _ : state) {
    std::vector<std::string> warnings;
    lockstep::FirstDivergence fd;
    lockstep::RankOrigin o = lockstep::FindRankOrigin(
        r->rows, r->gaps, r->collectives, &warnings, &fd);
    benchmark::DoNotOptimize(o);
  }
  state.counters["rows"] = static_cast<double>(r->rows.size());
}
BENCHMARK(BM_FindRankOrigin)->Arg(512)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
