// PairMetrics: everything msprobe's real-data (tensor) compare needs from a
// pair of tensors, plus what lockstep's own verdict needs, computed in one
// fused, parallel, vectorized pass over both tensors.
//
// The arithmetic follows msprobe HEAD (core/compare/npy_compare.py; see
// docs/msprobe_reference.md §3.4-3.5):
//  * Non-finite values (handle_inf_nan): an element where both sides are NaN,
//    or both are +-inf (any signs), counts as 0 on both sides. An element
//    where exactly one side is NaN, or exactly one side is inf, sets
//    `nonfinite_mismatch`; msprobe then reports "N/A" for every metric.
//    Such an element enters the sums and maxima as it is (typically making
//    them NaN or inf).
//  * dot, norms, sum_d2 and max_abs_diff use a and b converted to double.
//  * The relative error RE of an element is computed in msprobe's type
//    T = np.result_type(A, B, float32), with every operation rounded to T:
//    T is float32 when both sides are fp16/bf16/fp32, else float64 (fp64,
//    integers, bool). Where b == 0, eps_T is added to both sides first:
//    RE = |((a + e) - (b + e)) / (b + e)|, e = eps_T if b == 0 else 0.
//    The thresholds 0.001 and 0.005 are compared in T as well.
//  * msprobe skips handle_inf_nan for 0-d tensors; this kernel does not look
//    at shapes, so a caller needing that parity treats a 0-d pair with a
//    non-zero nan/inf count itself.
// Sums are accumulated per fixed chunk and merged in order, so every field
// is identical for any thread count.
// Thread safety: pure functions; PairMetrics is a plain value.
#ifndef LOCKSTEP_NUMERICS_METRICS_H_
#define LOCKSTEP_NUMERICS_METRICS_H_

#include <cstddef>
#include <cstdint>

#include "lockstep/numerics/dtype.h"

namespace lockstep {

struct PairMetrics {
  int64_t n = 0;  // elements compared
  // True when some element has NaN on one side only or inf on one side only.
  bool nonfinite_mismatch = false;
  int64_t nan_a = 0, nan_b = 0;  // NaN elements per side
  int64_t inf_a = 0, inf_b = 0;  // +-inf elements per side
  // In double, after zeroing matched non-finite elements:
  double dot = 0;           // sum a*b
  double sum_a2 = 0;        // sum a^2
  double sum_b2 = 0;        // sum b^2
  double sum_d2 = 0;        // sum (a-b)^2
  double max_abs_diff = 0;  // max |a-b|; NaN if any |a-b| is NaN
  double max_rel_err = 0;   // max RE (exact value of the T result); NaN wins
  int64_t rel_lt_1e3 = 0;   // count of RE < 0.001 (in T; NaN RE not counted)
  int64_t rel_lt_5e3 = 0;   // count of RE < 0.005
};

// The msprobe relative-error type for a pair: kFloat32 when both dtypes are
// fp16/bf16/fp32, else kFloat64.
DType RelErrDType(DType a, DType b);

// Computes the metrics of two raw little-endian buffers of n elements each,
// element by element, on up to `threads` threads (<= 1: the calling thread
// only). All dtypes, mixed too (compare/metrics.h takes two Tensors). For
// streaming, compute pieces and merge them with MergePairMetrics.
// REQUIRES: a holds n elements of type_a, b n of type_b; any alignment.
PairMetrics ComputePairMetrics(DType type_a, const void* a, DType type_b,
                               const void* b, size_t n, int threads);

// Adds `part` (the metrics of the elements after those in *total) into
// *total: counts and sums add, maxima take the max, NaN propagates, the
// mismatch flag ORs. The identity is a default PairMetrics. Merging the
// pieces of a split gives the same counts and maxima as one pass, and sums
// that differ only by rounding. REQUIRES: both from the same dtype pair.
void MergePairMetrics(const PairMetrics& part, PairMetrics* total);

// Cosine similarity dot / (|a| |b|), in double. NaN when a norm is 0 or any
// sum is NaN; msprobe's special cases (tiny norms, n == 1) are the caller's.
double Cosine(const PairMetrics& m);
// 1 - cosine, accurate near cosine 1 (where computing 1 - Cosine() loses
// everything below ~1e-16): (|a-b|^2 - (|a|-|b|)^2) / (2 |a| |b|), clamped
// to [0, 2]. NaN when a norm is 0 or not finite, or any sum is NaN.
double OneMinusCosine(const PairMetrics& m);
// Euclidean distance |a - b| = sqrt(sum_d2) (msprobe's EucDist). NaN if NaN.
double EuclideanDistance(const PairMetrics& m);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_METRICS_H_
