// The probe's statistics kernel on two cores: ComputeTensorMoments over a
// large tensor in fixed chunks, some of them taken by a helper thread that
// waits for work while the probe is active.
//
// The result does not depend on which thread summed which chunk, nor on
// whether there is a helper at all: a tensor of kChunk elements or more is
// always summed chunk by chunk and the chunks' sums are merged in order. Two
// identical runs give identical dumps on any machine with the same kernel.
//
// The caller waits for the result (the tensor is read before Compute
// returns), so the probe's semantics do not change: a tensor is summarized
// as it is when its operator starts or ends. The helper spins for a short
// while after each job (the probe hands out tensors every few microseconds
// in a training step), then sleeps until the next.
//
// Thread safety: Compute from one thread at a time (the probe holds its
// lock).
#ifndef LOCKSTEP_SRC_TORCH_SPLIT_MOMENTS_H_
#define LOCKSTEP_SRC_TORCH_SPLIT_MOMENTS_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "lockstep/compare/tensor_stats.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {

class SplitMoments {
 public:
  // Elements per chunk: 64 KiB of float32.
  static constexpr size_t kChunk = size_t{1} << 14;

  // helper: whether to start a helper thread (on first use). Without one,
  // Compute gives the same results on the calling thread alone.
  explicit SplitMoments(bool helper);
  ~SplitMoments();  // stops and joins the helper
  SplitMoments(const SplitMoments&) = delete;
  SplitMoments& operator=(const SplitMoments&) = delete;

  // ComputeTensorMoments(type, data, n) in chunks of kChunk merged in order
  // (one call when n < kChunk).
  TensorStats Compute(DType type, const void* data, size_t n);

  // Whether a helper thread ran (for tests).
  bool helper_started() const { return helper_.joinable(); }

 private:
  // The current job's next chunk: (job id << 32) | chunk index.
  static constexpr uint32_t kClosed = 0xffffffffu;  // a finished job's index
  static uint64_t Pack(uint32_t job, uint32_t chunk) {
    return (uint64_t{job} << 32) | chunk;
  }
  void HelperLoop();
  void WakeHelper();
  // Takes and sums chunks of job `job` until none is left or the job is
  // closed or replaced.
  void TakeChunks(uint32_t job);
  void SumChunk(size_t c);

  const bool want_helper_;
  std::thread helper_;
  std::atomic<uint64_t> next_{0};
  std::atomic<bool> busy_{false};      // the helper may be in a job
  std::atomic<bool> sleeping_{false};  // the helper waits on wake_
  std::mutex sleep_mu_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
  uint32_t job_ = 0;
  // The job, written by Compute before it publishes the job in next_.
  std::atomic<DType> type_{DType::kFloat32};
  std::atomic<const char*> data_{nullptr};
  std::atomic<size_t> n_{0};
  std::atomic<uint32_t> chunks_{0};
  std::vector<TensorStats> parts_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_TORCH_SPLIT_MOMENTS_H_
