#include "torch/split_moments.h"

#include <immintrin.h>

#include <chrono>
#include <mutex>

#include "lockstep/core/parallel.h"

namespace lockstep {
namespace {

// How long the helper spins for the next job before it sleeps: a training
// step's operators come every few microseconds, a pause between steps
// (data loading, logging) lasts longer.
constexpr auto kSpin = std::chrono::microseconds(200);

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace

SplitMoments::SplitMoments(bool helper)
    : want_helper_(helper && HardwareThreads() > 1) {}

SplitMoments::~SplitMoments() {
  if (!helper_.joinable()) return;
  stop_.store(true);
  next_.store(Pack(job_ + 1, 0));
  WakeHelper();
  helper_.join();
}

void SplitMoments::WakeHelper() {
  // The helper sets sleeping_ before it looks at next_ a last time, and
  // this thread stored next_ before it looks at sleeping_ (both seq_cst):
  // either the helper sees the new job or this sees it asleep.
  if (!sleeping_.load()) return;
  std::lock_guard<std::mutex> lock(sleep_mu_);
  wake_.notify_one();
}

void SplitMoments::SumChunk(size_t c) {
  const size_t n = n_.load(std::memory_order_relaxed);
  const size_t begin = c * kChunk;
  const size_t count = std::min(kChunk, n - begin);
  const DType type = type_.load(std::memory_order_relaxed);
  parts_[c] = ComputeTensorMoments(
      type, data_.load(std::memory_order_relaxed) + begin * DTypeSize(type),
      count);
}

void SplitMoments::TakeChunks(uint32_t job) {
  uint64_t v = next_.load();
  for (;;) {
    if (static_cast<uint32_t>(v >> 32) != job) return;
    uint32_t c = static_cast<uint32_t>(v);
    // chunks_ belongs to `job` while the job is unfinished, which a chunk
    // index below it shows once the exchange below succeeds.
    if (c >= chunks_.load(std::memory_order_relaxed)) return;
    if (next_.compare_exchange_weak(v, v + 1)) {
      SumChunk(c);
      v = next_.load();
    }
  }
}

void SplitMoments::HelperLoop() {
  uint32_t seen = 0;
  for (;;) {
    auto spin_until = std::chrono::steady_clock::now() + kSpin;
    uint64_t v = next_.load();
    int polls = 0;
    while (static_cast<uint32_t>(v >> 32) == seen) {
      Pause();
      if (++polls % 64 == 0 && std::chrono::steady_clock::now() > spin_until) {
        std::unique_lock<std::mutex> lock(sleep_mu_);
        sleeping_.store(true);
        wake_.wait(lock, [&] {
          return static_cast<uint32_t>(next_.load() >> 32) != seen;
        });
        sleeping_.store(false);
        spin_until = std::chrono::steady_clock::now() + kSpin;
      }
      v = next_.load();
    }
    if (stop_.load()) return;
    // busy_ before the job is read: Compute waits for it to drop before it
    // writes the next job.
    busy_.store(true);
    v = next_.load();
    seen = static_cast<uint32_t>(v >> 32);
    TakeChunks(seen);
    busy_.store(false);
  }
}

TensorStats SplitMoments::Compute(DType type, const void* data, size_t n) {
  if (n < kChunk) return ComputeTensorMoments(type, data, n);
  const size_t chunks = (n + kChunk - 1) / kChunk;
  if (want_helper_ && !helper_.joinable()) {
    helper_ = std::thread([this] { HelperLoop(); });
  }
  parts_.resize(chunks);
  type_.store(type, std::memory_order_relaxed);
  data_.store(static_cast<const char*>(data), std::memory_order_relaxed);
  n_.store(n, std::memory_order_relaxed);
  chunks_.store(static_cast<uint32_t>(chunks), std::memory_order_relaxed);
  ++job_;
  next_.store(Pack(job_, 0));  // publishes the job
  WakeHelper();
  TakeChunks(job_);
  // Every chunk is taken. Closed, the job gives the helper no chunk even
  // if it reads the next job's chunk count; the helper may still be
  // summing its last chunk (busy_ drops when it is done).
  next_.store(Pack(job_, kClosed));
  while (busy_.load()) Pause();
  TensorStats total;
  for (const TensorStats& p : parts_) MergeTensorStats(p, &total);
  return total;
}

}  // namespace lockstep
