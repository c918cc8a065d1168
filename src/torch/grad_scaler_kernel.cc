#include "torch/grad_scaler_kernel.h"

#include <cstdint>
#include <cstring>

#include "lockstep/numerics/cpu_features.h"

namespace lockstep::internal {
namespace {

// A value is inf or NaN exactly when its magnitude bits are >= those of
// inf. The running max of the magnitude bits is an integer reduction, which
// the compiler vectorizes (a float one it may not reorder).
template <typename T>
struct Bits;
template <>
struct Bits<float> {
  using U = uint32_t;
  static constexpr U kAbs = 0x7fffffffu, kInf = 0x7f800000u;
};
template <>
struct Bits<double> {
  using U = uint64_t;
  static constexpr U kAbs = 0x7fffffffffffffffull;
  static constexpr U kInf = 0x7ff0000000000000ull;
};

// The loops, written once and compiled twice: inlined into a portable
// function and into one built for AVX2 (the kernel paths of
// numerics/cpu_features.h, chosen at run time below).
template <typename T>
[[gnu::always_inline]] inline bool UnscaleLoop(T* p, size_t n, T inv) {
  using B = Bits<T>;
  typename B::U max_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    T v = p[i] * inv;
    p[i] = v;
    typename B::U b;
    std::memcpy(&b, &v, sizeof b);
    b &= B::kAbs;
    max_bits = b > max_bits ? b : max_bits;
  }
  return max_bits >= B::kInf;
}

[[gnu::always_inline]] inline bool NonFiniteLoop(const float* p, size_t n) {
  uint32_t max_bits = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, &p[i], sizeof b);
    b &= Bits<float>::kAbs;
    max_bits = b > max_bits ? b : max_bits;
  }
  return max_bits >= Bits<float>::kInf;
}

template <typename T>
bool UnscalePortable(T* p, size_t n, T inv) {
  return UnscaleLoop(p, n, inv);
}
bool NonFinitePortable(const float* p, size_t n) { return NonFiniteLoop(p, n); }
#if defined(__x86_64__)
#define LOCKSTEP_AVX2_ONLY __attribute__((target("avx2")))
#else
#define LOCKSTEP_AVX2_ONLY  // CpuLevelActive(kAvx2) is false there
#endif
template <typename T>
LOCKSTEP_AVX2_ONLY bool UnscaleAvx2(T* p, size_t n, T inv) {
  return UnscaleLoop(p, n, inv);
}
LOCKSTEP_AVX2_ONLY bool NonFiniteAvx2(const float* p, size_t n) {
  return NonFiniteLoop(p, n);
}

bool Avx2() { return CpuLevelActive(CpuLevel::kAvx2); }

}  // namespace

bool UnscaleAndCheck(float* p, size_t n, float inv) {
  return Avx2() ? UnscaleAvx2(p, n, inv) : UnscalePortable(p, n, inv);
}

bool UnscaleAndCheck(double* p, size_t n, double inv) {
  return Avx2() ? UnscaleAvx2(p, n, inv) : UnscalePortable(p, n, inv);
}

bool AnyNonFinite(const float* p, size_t n) {
  return Avx2() ? NonFiniteAvx2(p, n) : NonFinitePortable(p, n);
}

}  // namespace lockstep::internal
