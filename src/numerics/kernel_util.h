// Internal pieces shared by the one-pass tensor kernels (pair metrics and
// single-tensor statistics): the arithmetic "lane" a dtype is processed in,
// block conversion into stack buffers, fixed-size chunking with an
// in-order merge (so results do not depend on the thread count), and the
// run-time choice between the AVX2 and the portable kernels.
// Thread safety: pure functions.
#ifndef LOCKSTEP_SRC_COMPARE_KERNEL_UTIL_H_
#define LOCKSTEP_SRC_COMPARE_KERNEL_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "lockstep/core/parallel.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep::internal {

// Elements per parallel chunk. Fixed, so the partial sums, and therefore the
// rounding of the merged sums, are the same for any thread count.
inline constexpr size_t kChunk = size_t{1} << 16;
// Elements per converted block (two blocks of doubles fit in L1).
inline constexpr size_t kBlock = 1024;

// Arithmetic type of a kernel: float for fp16/bf16/fp32 data, double for
// fp64 and for integers and bool (which msprobe casts to float64).
enum class Lane { kFloat, kDouble };
Lane LaneOf(DType t);
// msprobe's relative-error type np.result_type(A, B, float32): float unless
// either side needs double.
Lane PairLane(DType a, DType b);

// Elements [begin, begin + n) of `data` (dtype t) as floats: a pointer into
// `data` when t is fp32, else `buf` filled by conversion.
// REQUIRES: LaneOf(t) == kFloat; buf holds n floats.
const float* LoadFloats(DType t, const void* data, size_t begin, size_t n,
                        float* buf);
// The same as doubles (ints and bool converted as numpy's astype(float64):
// rounded to nearest). REQUIRES: buf holds n doubles.
const double* LoadDoubles(DType t, const void* data, size_t begin, size_t n,
                          double* buf);

inline const float* Load(DType t, const void* data, size_t begin, size_t n,
                         float* buf) {
  return LoadFloats(t, data, begin, n, buf);
}
inline const double* Load(DType t, const void* data, size_t begin, size_t n,
                          double* buf) {
  return LoadDoubles(t, data, begin, n, buf);
}

// Calls fn(const T* x, size_t len) on consecutive blocks of at most kBlock
// elements covering [begin, end) of `data`, converted to T (float or double).
template <typename T, typename Fn>
void ForEachBlock(DType t, const void* data, size_t begin, size_t end,
                  const Fn& fn) {
  T buf[kBlock];
  for (size_t i = begin; i < end; i += kBlock) {
    size_t len = std::min(kBlock, end - i);
    fn(Load(t, data, i, len, buf), len);
  }
}
// The same for two buffers in step: fn(const T* a, const T* b, size_t len).
template <typename T, typename Fn>
void ForEachBlockPair(DType ta, const void* a, DType tb, const void* b,
                      size_t begin, size_t end, const Fn& fn) {
  T buf_a[kBlock], buf_b[kBlock];
  for (size_t i = begin; i < end; i += kBlock) {
    size_t len = std::min(kBlock, end - i);
    fn(Load(ta, a, i, len, buf_a), Load(tb, b, i, len, buf_b), len);
  }
}

// True when the AVX2/FMA/F16C kernels run: the CPU has them and
// CpuLevelLimit() (cpu_features.h) allows them.
bool UseAvx2();

// max that propagates NaN like np.max: once m or x is NaN the result is NaN.
inline double NanMax(double m, double x) {
  return (x > m || std::isnan(x)) ? x : m;
}

// Splits [0, n) into kChunk-sized chunks, runs chunk_fn(begin, end, &acc)
// on each (in parallel on up to `threads` threads) with a value-initialized
// Acc, and merges the partials in chunk order with merge(part, &total).
template <typename Acc, typename ChunkFn, typename MergeFn>
Acc ReduceChunks(size_t n, int threads, const ChunkFn& chunk_fn,
                 const MergeFn& merge) {
  Acc total{};
  size_t chunks = (n + kChunk - 1) / kChunk;
  if (chunks <= 1 || threads <= 1) {
    for (size_t c = 0; c < chunks; ++c) {
      Acc part{};
      chunk_fn(c * kChunk, std::min(n, (c + 1) * kChunk), &part);
      merge(part, &total);
    }
    return total;
  }
  std::vector<Acc> parts(chunks);
  ParallelForRange(chunks, 1, threads, [&](size_t first, size_t last) {
    for (size_t c = first; c < last; ++c) {
      chunk_fn(c * kChunk, std::min(n, (c + 1) * kChunk), &parts[c]);
    }
  });
  for (const Acc& part : parts) merge(part, &total);
  return total;
}

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_COMPARE_KERNEL_UTIL_H_
