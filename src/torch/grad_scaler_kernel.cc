#include "torch/grad_scaler_kernel.h"

#include <cstdint>
#include <cstring>

namespace lockstep::internal {
namespace {

// A value is inf or NaN exactly when its magnitude bits are >= those of
// inf. The running max of the magnitude bits is an integer reduction, which
// the compiler vectorizes (a float one it may not reorder).
constexpr uint32_t kF32Abs = 0x7fffffffu;
constexpr uint32_t kF32Inf = 0x7f800000u;
constexpr uint64_t kF64Abs = 0x7fffffffffffffffull;
constexpr uint64_t kF64Inf = 0x7ff0000000000000ull;

}  // namespace

__attribute__((target_clones("avx2", "default"))) bool UnscaleAndCheck(
    float* p, size_t n, float inv) {
  uint32_t max_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    float v = p[i] * inv;
    p[i] = v;
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    b &= kF32Abs;
    max_bits = b > max_bits ? b : max_bits;
  }
  return max_bits >= kF32Inf;
}

__attribute__((target_clones("avx2", "default"))) bool UnscaleAndCheck(
    double* p, size_t n, double inv) {
  uint64_t max_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    double v = p[i] * inv;
    p[i] = v;
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    b &= kF64Abs;
    max_bits = b > max_bits ? b : max_bits;
  }
  return max_bits >= kF64Inf;
}

__attribute__((target_clones("avx2", "default"))) bool AnyNonFinite(
    const float* p, size_t n) {
  uint32_t max_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, &p[i], sizeof b);
    b &= kF32Abs;
    max_bits = b > max_bits ? b : max_bits;
  }
  return max_bits >= kF32Inf;
}

}  // namespace lockstep::internal
