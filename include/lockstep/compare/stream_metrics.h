// The fused pair metrics (metrics.h) over two tensors that lie in files,
// streamed: both files are mapped, each thread reads its fixed chunks
// through the map and drops the pages it has read from the map
// (MADV_DONTNEED, 8 MiB at a time), so memory use stays at a few chunks.
// From the page cache this saves the copy that pread makes into a buffer:
// `lockstep compare` of 2 GiB of fp32 .npy took 0.13 s against 0.16 s with
// pread (medians of 7, 2 threads, Linux 6.18; bench/compare_e2e_bench.cc).
// Asking for a chunk's pages in one call (MADV_POPULATE_READ) measured
// slower (0.15 s): the kernel then walks the pages one by one. The
// per-chunk results are merged in chunk order.
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
// Errors: naming the file, when it cannot be opened or mapped, or IoError
// when it is shorter than the tensor or shrank while it was read (the file
// changed since the tensor was read; the map's SIGBUS guard, core/file.h,
// turns what was cut off into zeros, then this error); Corruption naming the
// file when a tensor with an unverified_crc32() has other bytes (checked on the
// chunks as they are read, merged with Crc32Combine).
StatusOr<PairMetrics> StreamPairMetrics(const Tensor& a, const Tensor& b,
                                        int threads);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_STREAM_METRICS_H_
