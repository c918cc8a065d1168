// The fused pair metrics (metrics.h) over two tensors that lie in files,
// streamed: both files are read with pread in fixed chunks into small
// per-thread buffers that stay in cache, and the per-chunk results are merged
// in chunk order. From the page cache this is faster than faulting the pages
// in through a memory map, and memory use stays at a few chunks.
// Results do not depend on the thread count (fixed chunks, ordered merge).
// Thread safety: thread-safe; uses up to `threads` threads.
#ifndef LOCKSTEP_COMPARE_STREAM_METRICS_H_
#define LOCKSTEP_COMPARE_STREAM_METRICS_H_

#include <cstdint>

#include "lockstep/compare/metrics.h"
#include "lockstep/core/status.h"
#include "lockstep/format/tensor.h"

namespace lockstep {

// Elements per chunk (a multiple of the kernel's own 64 Ki chunk).
inline constexpr int64_t kStreamChunkElements = 256 * 1024;

// REQUIRES: a.numel() == b.numel(); both have a file_region().
// Errors: IoError naming the file when a read fails or comes up short (the
// file changed since it was opened); Corruption naming the file when a
// tensor with an unverified_crc32() has other bytes (checked on the chunks
// as they are read, merged with Crc32Combine).
StatusOr<PairMetrics> StreamPairMetrics(const Tensor& a, const Tensor& b,
                                        int threads);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_STREAM_METRICS_H_
