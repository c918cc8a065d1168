// What the probe costs a training step: LeNet-5 (batch 32, 1x32x32, SGD
// with momentum, 2 intra-op threads) with and without the probe.
//
//   build/bin/probe_bench --benchmark_repetitions=10
//       --benchmark_enable_random_interleaving=true
//       --benchmark_report_aggregates_only=true [--fixed_malloc]
//
// (random interleaving spreads the machine's noise over all cases; compare
// the medians of one run). Second argument: intra-op threads (1 or 2).
//
// Cases (mode): 0 no probe; 1 a probe that is started but whose `steps`
// filter skips every step (callbacks disabled: "switched off"); 2 L1
// statistics; 3 L1 md5; 4 L1 tensor; 5 callbacks only (nothing dumped); 6 L1
// statistics with ProbeOptions::write_behind on; 7 L1 tensor packed
// (tensor_format pack: one dump_tensor_data.pack per step); 8 L1 shadow
// (every forward call replayed in float64 as it runs); 9 L1 shadow with
// sample_rate 0.1. Files on
// $LOCKSTEP_BENCH_DIR, default /tmp. Each iteration is one step including
// the probe's per-step dump.json write.
//
// Tensor mode's baselines, in the same run: BM_SameFilesPlainWrite writes
// the .npy files of one step (msprobe's layout) with plain open/write/close;
// BM_SameBytesOneFilePlainWrite writes the bytes of one step's pack as one
// file. Tensor mode's bytes/s over its baseline's is the ratio to what the
// file system gives the same bytes.
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <torch/optim/sgd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "examples/cpp/lenet_model.h"
#include "lockstep/core/file.h"
#include "lockstep/torch/probe.h"

namespace {

std::string BenchDir() {
  const char* d = std::getenv("LOCKSTEP_BENCH_DIR");
  // Per process: two checkouts' test suites may run it at once.
  return std::string(d ? d : "/tmp") + "/lockstep_probe_bench." +
         std::to_string(getpid());
}

// Page faults of this process so far (fresh pages the allocator maps: a
// step that frees and re-maps its activations pays for zeroing them).
int64_t MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
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
  kStatisticsBehind,
  kTensorPacked,
  kShadow,
  kShadowTenth
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
    bool tensors = mode == kTensor || mode == kTensorPacked;
    c.task = mode == kMd5 ? lockstep::ProbeTask::kMd5
             : tensors    ? lockstep::ProbeTask::kTensor
                          : lockstep::ProbeTask::kStatistics;
    if (mode == kTensorPacked) c.tensor_format = lockstep::TensorFormat::kPack;
    if (mode == kShadow || mode == kShadowTenth) {
      c.task = lockstep::ProbeTask::kShadow;
      c.sample_rate = mode == kShadowTenth ? 0.1 : 1;
    }
    if (mode == kOff) c.steps = {-1};  // no step is dumped
    if (mode == kCallbacks) c.list = {"no entry has this name"};
    lockstep::ProbeOptions o;
    o.write_behind = mode == kStatisticsBehind;
    probe = lockstep::Probe::Create(c, o).value();
    if (!probe->Start().ok()) state.SkipWithError("probe start failed");
  }
  int64_t faults = MinorFaults();
  double step_seconds = 0;  // in Probe::Step (dump.json, step dir)
  for (auto _ : state) {
    opt.zero_grad();
    at::Tensor loss = at::cross_entropy_loss(model->forward(x), y);
    loss.backward();
    opt.step();
    if (probe) {
      auto t0 = std::chrono::steady_clock::now();
      if (!probe->Step().ok()) state.SkipWithError("probe step failed");
      step_seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
    }
  }
  state.counters["step_ms"] = benchmark::Counter(
      step_seconds * 1e3, benchmark::Counter::kAvgIterations);
  state.counters["faults"] =
      benchmark::Counter(static_cast<double>(MinorFaults() - faults),
                         benchmark::Counter::kAvgIterations);
  if (probe) (void)probe->Stop();
  if (mode == kTensor || mode == kTensorPacked) {  // the rate of the tensors
    uint64_t bytes = 0;
    for (const auto& f :
         std::filesystem::recursive_directory_iterator(BenchDir())) {
      std::string ext = f.path().extension().string();
      // .pt (the default tensor format), .npy or the step's .pack.
      if (f.is_regular_file() &&
          (ext == ".pt" || ext == ".npy" || ext == ".pack")) {
        bytes += f.file_size();
      }
    }
    state.SetBytesProcessed(static_cast<int64_t>(bytes));
  }
  std::filesystem::remove_all(BenchDir());
}

// One LeNet tensor-mode step dumped into `dir` (step0/rank0), packed or not.
void DumpOneStep(const std::string& dir, bool packed) {
  at::set_num_threads(1);
  torch::manual_seed(0);
  lockstep_examples::LeNet model;
  at::Tensor x = at::randn({32, 1, 32, 32});
  at::Tensor y = at::randint(0, 10, {32}, at::kLong);
  lockstep::ProbeConfig c;
  c.dump_path = dir;
  c.task = lockstep::ProbeTask::kTensor;
  if (packed) c.tensor_format = lockstep::TensorFormat::kPack;
  auto probe = lockstep::Probe::Create(c).value();
  if (!probe->Start().ok()) return;
  at::cross_entropy_loss(model->forward(x), y).backward();
  (void)probe->Stop();
}

// open, write from the caller's buffer until done, close: nothing else.
bool PlainWrite(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return ::close(fd) == 0 && done == bytes.size();
}

// The baseline of packed tensor mode: the bytes of one LeNet step's pack
// (taken from a real dump) written as one new file with plain
// open/write/close (PlainWrite), a fresh step directory per iteration.
void BM_SameBytesOneFilePlainWrite(benchmark::State& state) {
  namespace fs = std::filesystem;
  std::string dir = BenchDir() + "_plain_pack";
  fs::remove_all(dir);
  DumpOneStep(dir + "/sample", /*packed=*/true);
  auto bytes = lockstep::ReadFileToString(
      dir + "/sample/step0/rank0/dump_tensor_data.pack");
  if (!bytes.ok()) state.SkipWithError("no sample pack");
  int64_t step = 0, total = 0;
  for (auto _ : state) {
    std::string d = dir + "/step" + std::to_string(step++) + "/rank0";
    fs::create_directories(d);
    if (!PlainWrite(d + "/data.pack", *bytes)) {
      state.SkipWithError("write failed");
    }
    total += static_cast<int64_t>(bytes->size());
  }
  state.SetBytesProcessed(total);
  fs::remove_all(dir);
}
BENCHMARK(BM_SameBytesOneFilePlainWrite)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5)
    ->UseRealTime();

// The baseline of tensor mode: the same files (names and sizes of one
// LeNet tensor-mode step, taken from a real dump) written with plain
// open/write/close, one after another, a fresh step directory per
// iteration. Tensor mode's bytes/s over this one's is the ratio to what the
// file system gives these files.
void BM_SameFilesPlainWrite(benchmark::State& state) {
  namespace fs = std::filesystem;
  std::string dir = BenchDir() + "_plain";
  fs::remove_all(dir);
  std::vector<std::pair<std::string, std::string>> files;  // name, bytes
  DumpOneStep(dir + "/sample", /*packed=*/false);
  for (const auto& f :
       fs::directory_iterator(dir + "/sample/step0/rank0/dump_tensor_data")) {
    auto bytes = lockstep::ReadFileToString(f.path().string());
    if (bytes.ok()) files.emplace_back(f.path().filename(), *bytes);
  }
  int64_t step = 0, total = 0;
  for (auto _ : state) {
    std::string d = dir + "/step" + std::to_string(step++) + "/rank0/data";
    fs::create_directories(d);
    for (const auto& [name, bytes] : files) {
      if (!lockstep::WriteFileDirect(d + "/" + name, bytes).ok()) {
        state.SkipWithError("write failed");
      }
      total += static_cast<int64_t>(bytes.size());
    }
  }
  state.SetBytesProcessed(total);
  fs::remove_all(dir);
}
BENCHMARK(BM_SameFilesPlainWrite)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5)
    ->UseRealTime();

BENCHMARK(BM_LenetStep)
    ->ArgNames({"mode", "threads"})
    ->ArgsProduct({{kNone, kOff, kStatistics, kMd5, kTensor, kCallbacks,
                    kStatisticsBehind, kTensorPacked, kShadow, kShadowTenth},
                   {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5)
    ->UseRealTime();

}  // namespace

// --fixed_malloc: glibc's malloc keeps freed memory instead of returning it
// (mmap threshold 256 MiB, trim threshold 1 GiB) in every case. With the
// defaults, a LeNet step maps and unmaps its activations afresh (~650 page
// faults, +40% time) in some runs and not in others, depending on the
// allocation history glibc's dynamic mmap threshold has seen; the
// "faults" counter shows which regime a case ran in.
int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--fixed_malloc") {
      mallopt(M_MMAP_THRESHOLD, 256 << 20);
      mallopt(M_TRIM_THRESHOLD, 1 << 30);
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
