// What checking the CRC-32 of .pt storage costs a streamed tensor compare:
// two float32 tensors of 128 MiB each in .pt files (page cache), compared
// with StreamPairMetrics on 2 threads with the recorded CRC-32 checked on
// the chunks (as compare does) and with the check skipped, in one run.
//
//   build/bin/stream_crc_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// Counter GB/s: tensor bytes of both sides per second (1e9).
#include <benchmark/benchmark.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "format/pt_builder.h"
#include "lockstep/compare/stream_metrics.h"
#include "lockstep/core/file.h"
#include "lockstep/format/tensor_file.h"

namespace lockstep {
namespace {

constexpr int kElements = 32 << 20;  // 128 MiB of float32

struct Pair {
  Tensor a, b;
};

const Pair& Files() {
  static const Pair pair = [] {
    std::string dir = "/tmp/lockstep_stream_crc_" + std::to_string(::getpid());
    ::mkdir(dir.c_str(), 0700);
    std::mt19937 rng(1);
    std::normal_distribution<float> normal;
    std::string bytes(size_t{kElements} * 4, '\0');
    Pair p;
    for (int side = 0; side < 2; ++side) {
      for (size_t i = 0; i < kElements; ++i) {
        float v = normal(rng);
        std::memcpy(&bytes[i * 4], &v, 4);
      }
      std::string pt = testing::BuildPt(
          "x",
          testing::TensorPickle({.numel = kElements, .shape = {kElements}}),
          bytes);
      std::string path = dir + (side == 0 ? "/a.pt" : "/b.pt");
      (void)WriteFileAtomic(path, pt);
      StatusOr<Tensor> t = ReadTensorFile(path);
      if (!t.ok() || !t->unverified_crc32() || !t->file_region()) std::abort();
      (side == 0 ? p.a : p.b) = *t;
    }
    static std::string to_remove = dir;
    std::atexit([] { std::filesystem::remove_all(to_remove); });
    return p;
  }();
  return pair;
}

void Run(benchmark::State& state, const Tensor& a, const Tensor& b) {
  for (auto _ : state) {
    StatusOr<PairMetrics> m = StreamPairMetrics(a, b, 2);
    if (!m.ok()) state.SkipWithError(m.status().ToString().c_str());
    benchmark::DoNotOptimize(m);
  }
  state.counters["GB/s"] =
      benchmark::Counter(2.0 * kElements * 4 * state.iterations() / 1e9,
                         benchmark::Counter::kIsRate);
}

void BM_StreamWithCrc(benchmark::State& state) {
  Run(state, Files().a, Files().b);
}
BENCHMARK(BM_StreamWithCrc)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamWithoutCrc(benchmark::State& state) {
  Tensor a(Files().a.dtype(), Files().a.shape(), Files().a.data(), nullptr);
  Tensor b(Files().b.dtype(), Files().b.shape(), Files().b.data(), nullptr);
  a = a.WithFileRegion(Files().a.file_region()->path,
                       Files().a.file_region()->offset);
  b = b.WithFileRegion(Files().b.file_region()->path,
                       Files().b.file_region()->offset);
  Run(state, a, b);
}
BENCHMARK(BM_StreamWithoutCrc)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace lockstep

BENCHMARK_MAIN();
