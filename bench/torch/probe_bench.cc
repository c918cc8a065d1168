// What the probe costs a training step: LeNet-5 (batch 32, 1x32x32, SGD
// with momentum, 2 intra-op threads) with and without the probe.
//
//   build/bin/probe_bench --benchmark_repetitions=10
//       --benchmark_enable_random_interleaving=true
//       --benchmark_report_aggregates_only=true
//
// (random interleaving spreads the machine's noise over all cases; compare
// the medians of one run). Second argument: intra-op threads (1 or 2).
//
// Cases (mode): 0 no probe; 1 a probe that is started but whose `steps`
// filter skips every step (callbacks disabled: "switched off"); 2 L1
// statistics; 3 L1 md5; 4 L1 tensor; 5 callbacks only (nothing dumped); 6 L1
// statistics with ProbeOptions::write_behind off (files on
// $LOCKSTEP_BENCH_DIR, default /tmp). Each iteration is one step including
// the probe's per-step dump.json write.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <torch/optim/sgd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "examples/cpp/lenet_model.h"
#include "lockstep/torch/probe.h"

namespace {

std::string BenchDir() {
  const char* d = std::getenv("LOCKSTEP_BENCH_DIR");
  return std::string(d ? d : "/tmp") + "/lockstep_probe_bench";
}

// kCallbacks: started, every operator seen, none dumped (a `list` filter
// that matches nothing): the cost of the RecordFunction callbacks alone.
enum Mode {
  kNone,
  kOff,
  kStatistics,
  kMd5,
  kTensor,
  kCallbacks,
  kStatisticsSync
};

void BM_LenetStep(benchmark::State& state) {
  at::set_num_threads(static_cast<int>(state.range(1)));
  torch::manual_seed(0);
  lockstep_examples::LeNet model;
  torch::optim::SGD opt(model->parameters(),
                        torch::optim::SGDOptions(0.01).momentum(0.9));
  at::Tensor x = at::randn({32, 1, 32, 32});
  at::Tensor y = at::randint(0, 10, {32}, at::kLong);
  Mode mode = static_cast<Mode>(state.range(0));
  std::unique_ptr<lockstep::Probe> probe;
  std::filesystem::remove_all(BenchDir());
  if (mode != kNone) {
    lockstep::ProbeConfig c;
    c.dump_path = BenchDir();
    c.task = mode == kMd5      ? lockstep::ProbeTask::kMd5
             : mode == kTensor ? lockstep::ProbeTask::kTensor
                               : lockstep::ProbeTask::kStatistics;
    if (mode == kOff) c.steps = {-1};  // no step is dumped
    if (mode == kCallbacks) c.list = {"no entry has this name"};
    lockstep::ProbeOptions o;
    o.write_behind = mode != kStatisticsSync;
    probe = lockstep::Probe::Create(c, o).value();
    if (!probe->Start().ok()) state.SkipWithError("probe start failed");
  }
  for (auto _ : state) {
    opt.zero_grad();
    at::Tensor loss = at::cross_entropy_loss(model->forward(x), y);
    loss.backward();
    opt.step();
    if (probe && !probe->Step().ok()) state.SkipWithError("probe step failed");
  }
  if (probe) (void)probe->Stop();
  std::filesystem::remove_all(BenchDir());
}

BENCHMARK(BM_LenetStep)
    ->ArgNames({"mode", "threads"})
    ->ArgsProduct({{kNone, kOff, kStatistics, kMd5, kTensor, kCallbacks,
                    kStatisticsSync},
                   {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);

}  // namespace

BENCHMARK_MAIN();
