// CRC-32 throughput: lockstep's carry-less-multiply paths (level 1:
// PCLMULQDQ, 2: VPCLMULQDQ) against zlib's crc32 (level 0) and a plain read of
// the same 64 MiB (out of cache), all in one run.
//
//   build/bin/crc32_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// Counter GB/s: bytes per second (1e9).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>

#include "lockstep/format/crc32.h"

namespace lockstep {
namespace {

const std::string& Data() {
  static const std::string data = [] {
    std::string s(size_t{64} << 20, '\0');
    std::mt19937_64 rng(1);
    for (size_t i = 0; i + 8 <= s.size(); i += 8) {
      uint64_t v = rng();
      s.replace(i, 8, reinterpret_cast<const char*>(&v), 8);
    }
    return s;
  }();
  return data;
}

void Report(benchmark::State& state) {
  state.counters["GB/s"] = benchmark::Counter(
      static_cast<double>(Data().size()) * state.iterations() / 1e9,
      benchmark::Counter::kIsRate);
}

// Arg: the kernel path (CpuLevel: 0 zlib, 1 PCLMULQDQ, 2 VPCLMULQDQ +
// AVX-512).
void BM_Crc32(benchmark::State& state) {
  const auto level = static_cast<CpuLevel>(state.range(0));
  CpuLevel was = SetCpuLevelLimit(level);
  if (Crc32Level() != level) {
    state.SkipWithError("this CPU lacks the level");
  } else {
    for (auto _ : state) benchmark::DoNotOptimize(Crc32(Data()));
  }
  SetCpuLevelLimit(was);
  Report(state);
}
BENCHMARK(BM_Crc32)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_MemRead(benchmark::State& state) {
  const auto* p = reinterpret_cast<const uint64_t*>(Data().data());
  size_t n = Data().size() / 8;
  for (auto _ : state) {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
      a ^= p[i];
      b ^= p[i + 1];
      c ^= p[i + 2];
      d ^= p[i + 3];
    }
    benchmark::DoNotOptimize(a ^ b ^ c ^ d);
  }
  Report(state);
}
BENCHMARK(BM_MemRead)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lockstep

BENCHMARK_MAIN();
