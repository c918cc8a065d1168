// What the probe costs a training step: LeNet-5 (batch 32, 1x32x32, SGD
// with momentum, 2 intra-op threads) with and without the probe.
//
//   build/bin/probe_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true
//
// Cases: no probe; a probe that is started but whose `steps` filter skips
// every step (callbacks disabled: "switched off"); L1 statistics; L1 md5;
// L1 tensor (files on $LOCKSTEP_BENCH_DIR, default /tmp). Each iteration is
// one step including the probe's per-step dump.json write.
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

enum Mode { kNone, kOff, kStatistics, kMd5, kTensor };

void BM_LenetStep(benchmark::State& state) {
  at::set_num_threads(2);
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
    probe = lockstep::Probe::Create(c).value();
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
    ->ArgName("mode")
    ->Arg(kNone)
    ->Arg(kOff)
    ->Arg(kStatistics)
    ->Arg(kMd5)
    ->Arg(kTensor)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(1.0);

}  // namespace

BENCHMARK_MAIN();
