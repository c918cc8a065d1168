// GradScaler costs, each measured against its baseline in the same run
// (interleaved iterations, so machine noise hits both alike):
//
//   build/bin/grad_scaler_bench --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
//
// UnscaleVsRead/float32/threads:T/bytes:B: GradScaler::Unscale of one
//   float32 gradient of B bytes (multiply by 1/scale and inf/NaN check, in
//   place) against a plain read of the same bytes (the running max of the
//   magnitude bits; T threads for both). Counters: unscale_GB/s, read_GB/s
//   and read_ratio = unscale GB/s over read GB/s (target >= 0.7).
// LeNetStep/float32/threads:1: one training step of LeNet-5 (batch 64,
//   28x28, SGD) plain and with GradScaler (Scale, Unscale, Step, Update),
//   alternating. Counters: plain_ms, scaled_ms, overhead_pct (scaled over
//   plain, minus 1: noisy on a shared machine), scaler_us (the time spent
//   in Scale, Unscale and Update themselves) and scaler_pct = scaler_us over
//   the plain step (target <= 3).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/optim/sgd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lockstep/core/parallel.h"
#include "lockstep/torch/grad_scaler.h"
#include "src/torch/grad_scaler_kernel.h"

namespace lockstep {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// The plain read: the scaler's loop without the multiply and the store
// (internal::AnyNonFinite, on the same kernel path), with the same chunking
// as the scaler's parallel pass.
bool Read(const float* p, size_t n, int threads) {
  std::atomic<bool> any{false};
  ParallelForRange(n, size_t{1} << 18, threads, [&](size_t b, size_t e) {
    if (internal::AnyNonFinite(p + b, e - b)) any = true;
  });
  return any.load();
}

void UnscaleVsRead(benchmark::State& state, size_t bytes, int threads) {
  at::set_num_threads(threads);
  size_t n = bytes / sizeof(float);
  at::Tensor p = at::zeros({int64_t(n)}).requires_grad_(true);
  p.mutable_grad() = at::randn({int64_t(n)});
  torch::optim::SGD opt({p}, torch::optim::SGDOptions(0.1));
  GradScalerOptions o;
  o.loss_scale.init_scale = 1.0;  // x * 1: the values stay put
  o.threads = threads;
  GradScaler scaler = std::move(*GradScaler::Create(o));
  const float* data = p.grad().data_ptr<float>();
  double t_read = 0, t_unscale = 0;
  for (auto _ : state) {
    Clock::time_point t0 = Clock::now();
    benchmark::DoNotOptimize(Read(data, n, threads));
    Clock::time_point t1 = Clock::now();
    if (!scaler.Unscale(opt).ok() || !scaler.Update().ok()) {
      state.SkipWithError("Unscale failed");
      return;
    }
    Clock::time_point t2 = Clock::now();
    t_read += Seconds(t0, t1);
    t_unscale += Seconds(t1, t2);
  }
  double total = double(bytes) * state.iterations();
  state.counters["unscale_GB/s"] = total / t_unscale / 1e9;
  state.counters["read_GB/s"] = total / t_read / 1e9;
  state.counters["read_ratio"] = t_read / t_unscale;
}

// LeNet-5 on raw tensors (conv 6@5x5, pool, conv 16@5x5, pool, 120, 84, 10).
struct LeNet {
  std::vector<at::Tensor> w;
  LeNet() {
    for (auto shape : std::vector<std::vector<int64_t>>{{6, 1, 5, 5},
                                                        {6},
                                                        {16, 6, 5, 5},
                                                        {16},
                                                        {120, 256},
                                                        {120},
                                                        {84, 120},
                                                        {84},
                                                        {10, 84},
                                                        {10}}) {
      w.push_back(at::randn(shape).mul_(0.1).requires_grad_(true));
    }
  }
  at::Tensor Loss(const at::Tensor& x, const at::Tensor& y) const {
    at::Tensor h = at::max_pool2d(at::conv2d(x, w[0], w[1]).relu(), {2, 2});
    h = at::max_pool2d(at::conv2d(h, w[2], w[3]).relu(), {2, 2}).flatten(1);
    h = at::linear(h, w[4], w[5]).relu();
    h = at::linear(h, w[6], w[7]).relu();
    return at::cross_entropy_loss(at::linear(h, w[8], w[9]), y);
  }
};

void LeNetStep(benchmark::State& state, int threads) {
  at::set_num_threads(threads);
  at::manual_seed(0);
  LeNet net;
  torch::optim::SGD opt(net.w, torch::optim::SGDOptions(0.01));
  GradScaler scaler = std::move(*GradScaler::FromSpec("dynamic"));
  at::Tensor x = at::randn({64, 1, 28, 28});
  at::Tensor y = at::randint(0, 10, {64});
  double t_plain = 0, t_scaled = 0, t_own = 0;
  for (auto _ : state) {
    Clock::time_point t0 = Clock::now();
    opt.zero_grad();
    net.Loss(x, y).backward();
    opt.step();
    Clock::time_point t1 = Clock::now();
    opt.zero_grad();
    at::Tensor loss = net.Loss(x, y);
    Clock::time_point t2 = Clock::now();
    at::Tensor scaled = scaler.Scale(loss);
    Clock::time_point t3 = Clock::now();
    scaled.backward();
    Clock::time_point t4 = Clock::now();
    bool ok = scaler.Unscale(opt).ok();
    Clock::time_point t5 = Clock::now();
    ok = ok && scaler.Step(opt).ok();
    Clock::time_point t6 = Clock::now();
    ok = ok && scaler.Update().ok();
    Clock::time_point t7 = Clock::now();
    if (!ok) {
      state.SkipWithError("scaled step failed");
      return;
    }
    t_plain += Seconds(t0, t1);
    t_scaled += Seconds(t1, t7);
    t_own += Seconds(t2, t3) + Seconds(t4, t5) + Seconds(t6, t7);
  }
  state.counters["plain_ms"] = t_plain / state.iterations() * 1e3;
  state.counters["scaled_ms"] = t_scaled / state.iterations() * 1e3;
  state.counters["scaler_us"] = t_own / state.iterations() * 1e6;
  state.counters["overhead_pct"] = (t_scaled / t_plain - 1) * 100;
  state.counters["scaler_pct"] = t_own / t_plain * 100;
}

int Register() {
  for (int threads : {1, 2}) {
    for (size_t bytes : {size_t{61706} * 4, size_t{64} << 20}) {
      std::string name =
          "UnscaleVsRead/float32/threads:" + std::to_string(threads) +
          "/bytes:" + std::to_string(bytes);
      benchmark::RegisterBenchmark(name.c_str(), UnscaleVsRead, bytes, threads)
          ->UseRealTime();
    }
  }
  benchmark::RegisterBenchmark("LeNetStep/float32/threads:1", LeNetStep, 1)
      ->UseRealTime();
  return 0;
}
const int kRegistered = Register();

}  // namespace
}  // namespace lockstep

BENCHMARK_MAIN();
