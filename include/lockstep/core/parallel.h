// Parallel loops over index ranges. Work is handed out in chunks from an
// atomic counter, so uneven items (tensors of different sizes) balance.
// Thread safety: `fn` is called concurrently from up to `threads` threads.
#ifndef LOCKSTEP_CORE_PARALLEL_H_
#define LOCKSTEP_CORE_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace lockstep {

// Number of hardware threads (at least 1).
int HardwareThreads();

// Calls fn(i) for every i in [0, n), on up to `threads` threads (the calling
// thread included). threads <= 1 runs inline. Returns when all calls returned.
void ParallelFor(size_t n, int threads, const std::function<void(size_t)>& fn);

// Calls fn(begin, end) on disjoint chunks covering [0, n), each chunk at most
// `grain` long (grain >= 1), on up to `threads` threads.
void ParallelForRange(size_t n, size_t grain, int threads,
                      const std::function<void(size_t, size_t)>& fn);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_PARALLEL_H_
