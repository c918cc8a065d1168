// Throughput of the one-pass tensor kernels against a plain memory read of
// the same bytes, for 64 MiB per side (out of cache).
//
//   build/bin/metrics_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// Counters: GB/s (bytes of the inputs per second, 1e9); for the kernels also
// read_GB/s and read_ratio (kernel GB/s over read GB/s), from a plain read
// of the same buffers timed just before each kernel iteration. The
// *MemRead benchmarks report that read alone.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/compare/metrics.h"
#include "lockstep/compare/tensor_stats.h"
#include "lockstep/core/parallel.h"
#include "lockstep/numerics/half.h"

namespace lockstep {
namespace {

constexpr size_t kBytesPerSide = size_t{64} << 20;
const DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                         DType::kFloat64, DType::kInt64};

struct Side {
  std::unique_ptr<uint64_t[]> words{new uint64_t[kBytesPerSide / 8]};
  void* data() { return words.get(); }
};

// Fills a with normal values (standard deviation `scale`) and b with
// a * (1 + 0.001 * normal), both encoded as T: a realistic compare, finite.
template <typename T>
void Fill(Side* a, Side* b, double scale, T (*encode)(double)) {
  std::mt19937_64 rng(1);
  std::normal_distribution<double> normal(0.0, 1.0);
  T* pa = static_cast<T*>(a->data());
  T* pb = static_cast<T*>(b->data());
  for (size_t i = 0; i < kBytesPerSide / sizeof(T); ++i) {
    double x = scale * normal(rng);
    pa[i] = encode(x);
    pb[i] = encode(x * (1 + 1e-3 * normal(rng)));
  }
}

uint64_t MemRead(const void* a, const void* b, size_t bytes, size_t chunk_bytes,
                 int threads);

// Two sides per dtype: normal values, b a perturbed copy of a.
struct Pair {
  Side a, b;
  size_t n;
  size_t elem_size;
  // Plain reads of both sides / of a, chunked like the kernels.
  void Read(int threads) {
    benchmark::DoNotOptimize(
        MemRead(a.data(), b.data(), kBytesPerSide, elem_size << 16, threads));
  }
  void ReadA(int threads) {
    benchmark::DoNotOptimize(
        MemRead(a.data(), nullptr, kBytesPerSide, elem_size << 16, threads));
  }
};

void FillPair(DType t, Pair* p) {
  switch (t) {
    case DType::kFloat32:
      return Fill<float>(&p->a, &p->b, 1,
                         [](double x) { return static_cast<float>(x); });
    case DType::kFloat16:
      return Fill<uint16_t>(&p->a, &p->b, 1, [](double x) {
        return FloatToHalf(static_cast<float>(x));
      });
    case DType::kBFloat16:
      return Fill<uint16_t>(&p->a, &p->b, 1, [](double x) {
        return FloatToBFloat16(static_cast<float>(x));
      });
    case DType::kFloat64:
      return Fill<double>(&p->a, &p->b, 1, [](double x) { return x; });
    default:  // int64: values ~1e6
      return Fill<int64_t>(&p->a, &p->b, 1e6,
                           [](double x) { return static_cast<int64_t>(x); });
  }
}

Pair& GetPair(DType t) {
  static std::map<DType, std::unique_ptr<Pair>> pairs;
  auto& p = pairs[t];
  if (!p) {
    p = std::make_unique<Pair>();
    p->elem_size = DTypeSize(t);
    p->n = kBytesPerSide / p->elem_size;
    FillPair(t, p.get());
  }
  return *p;
}

// XOR of every 32-byte word of [p, p + bytes): a plain vectorized read.
__attribute__((target("avx2"))) uint64_t XorRead(const void* p, size_t bytes) {
  const __m256i* v = static_cast<const __m256i*>(p);
  __m256i x0 = _mm256_setzero_si256(), x1 = x0, x2 = x0, x3 = x0;
  for (size_t i = 0; i + 4 <= bytes / 32; i += 4) {
    x0 = _mm256_xor_si256(x0, _mm256_loadu_si256(v + i));
    x1 = _mm256_xor_si256(x1, _mm256_loadu_si256(v + i + 1));
    x2 = _mm256_xor_si256(x2, _mm256_loadu_si256(v + i + 2));
    x3 = _mm256_xor_si256(x3, _mm256_loadu_si256(v + i + 3));
  }
  __m256i x =
      _mm256_xor_si256(_mm256_xor_si256(x0, x1), _mm256_xor_si256(x2, x3));
  return static_cast<uint64_t>(_mm256_extract_epi64(x, 0) ^
                               _mm256_extract_epi64(x, 3));
}

// Reads both sides in the kernels' chunking (64 Ki elements per chunk).
uint64_t MemRead(const void* a, const void* b, size_t bytes, size_t chunk_bytes,
                 int threads) {
  std::vector<uint64_t> parts((bytes + chunk_bytes - 1) / chunk_bytes);
  ParallelForRange(parts.size(), 1, threads, [&](size_t first, size_t last) {
    for (size_t c = first; c < last; ++c) {
      size_t off = c * chunk_bytes, len = std::min(chunk_bytes, bytes - off);
      parts[c] = (a ? XorRead(static_cast<const char*>(a) + off, len) : 0) ^
                 (b ? XorRead(static_cast<const char*>(b) + off, len) : 0);
    }
  });
  uint64_t x = 0;
  for (uint64_t p : parts) x ^= p;
  return x;
}

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Reports `bytes` per iteration as bytes_per_second and as GB/s (1e9).
void ReportRate(benchmark::State& state, size_t bytes, double secs) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["GB/s"] = static_cast<double>(state.iterations()) *
                           static_cast<double>(bytes) / secs / 1e9;
}

// The plain read baseline.
template <typename Read>
void RunRead(benchmark::State& state, size_t bytes, const Read& read) {
  auto start = Clock::now();
  for (auto _ : state) read();
  ReportRate(state, bytes, Seconds(start, Clock::now()));
}

// Times `kernel`, and before each of its iterations (untimed) `read` over
// the same bytes, so that read_ratio (kernel GB/s over read GB/s) compares
// runs made moments apart: other load on the machine affects both alike.
template <typename Read, typename Kernel>
void RunPaired(benchmark::State& state, size_t bytes, const Read& read,
               const Kernel& kernel) {
  double read_secs = 0, kernel_secs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto t0 = Clock::now();
    read();
    read_secs += Seconds(t0, Clock::now());
    state.ResumeTiming();
    auto t1 = Clock::now();
    kernel();
    kernel_secs += Seconds(t1, Clock::now());
  }
  ReportRate(state, bytes, kernel_secs);
  state.counters["read_GB/s"] = static_cast<double>(state.iterations()) *
                                static_cast<double>(bytes) / read_secs / 1e9;
  state.counters["read_ratio"] = read_secs / kernel_secs;
}

// Arguments: index into kDTypes, threads.
void BM_PairMemRead(benchmark::State& state, int d, int threads) {
  Pair& p = GetPair(kDTypes[d]);
  RunRead(state, 2 * kBytesPerSide, [&] { p.Read(threads); });
}

void BM_PairMetrics(benchmark::State& state, int d, int threads) {
  DType t = kDTypes[d];
  Pair& p = GetPair(t);
  RunPaired(
      state, 2 * kBytesPerSide, [&] { p.Read(threads); },
      [&] {
        PairMetrics m =
            ComputePairMetrics(t, p.a.data(), t, p.b.data(), p.n, threads);
        benchmark::DoNotOptimize(m);
      });
}

void BM_StatsMemRead(benchmark::State& state, int d, int threads) {
  Pair& p = GetPair(kDTypes[d]);
  RunRead(state, kBytesPerSide, [&] { p.ReadA(threads); });
}

void BM_TensorStats(benchmark::State& state, int d, int threads) {
  DType t = kDTypes[d];
  Pair& p = GetPair(t);
  RunPaired(
      state, kBytesPerSide, [&] { p.ReadA(threads); },
      [&] {
        TensorStats s = ComputeTensorStats(t, p.a.data(), p.n, threads);
        benchmark::DoNotOptimize(s);
      });
}

// Each read baseline is registered (and so run) right before its kernel.
void RegisterAll() {
  using Fn = void (*)(benchmark::State&, int, int);
  const std::pair<const char*, Fn> benches[] = {
      {"PairMemRead", BM_PairMemRead},
      {"PairMetrics", BM_PairMetrics},
      {"StatsMemRead", BM_StatsMemRead},
      {"TensorStats", BM_TensorStats}};
  for (int d = 0; d < 5; ++d) {
    for (int threads : {1, 2}) {
      for (auto [name, fn] : benches) {
        std::string full = std::string(name) + "/" +
                           std::string(TorchDTypeName(kDTypes[d]).substr(6)) +
                           "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(full.c_str(), fn, d, threads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  lockstep::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
