#include "lockstep/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace lockstep {

int HardwareThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

void ParallelForRange(size_t n, size_t grain, int threads,
                      const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  size_t chunks = (n + grain - 1) / grain;
  size_t workers =
      std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), chunks);
  if (workers <= 1) {
    for (size_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain));
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (;;) {
      size_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) return;
      size_t b = c * grain;
      fn(b, std::min(n, b + grain));
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (size_t i = 1; i < workers; ++i) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn) {
  ParallelForRange(n, 1, threads, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) fn(i);
  });
}

}  // namespace lockstep
