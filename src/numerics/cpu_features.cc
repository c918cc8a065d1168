#include "lockstep/numerics/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define LOCKSTEP_X86 1
#endif

namespace lockstep {
namespace {

#ifdef LOCKSTEP_X86
// CPUID leaf 1, ECX bit 29. Spelled out rather than taken from <cpuid.h>'s
// bit_F16C, whose name differs between GCC and clang releases.
constexpr unsigned kCpuid1EcxF16C = 1u << 29;
constexpr unsigned kCpuid1EcxPclmul = 1u << 1;
constexpr unsigned kCpuid1EcxSse41 = 1u << 19;
constexpr unsigned kCpuid7EcxVpclmulqdq = 1u << 10;

bool CpuidHasVpclmulqdq() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ecx & kCpuid7EcxVpclmulqdq) != 0;
}

// Whether CPUID leaf 1 sets every bit of `bits` in ECX.
bool CpuidEcxHas(unsigned bits) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ecx & bits) == bits;
}
#endif

}  // namespace

CpuFeatures DetectCpuFeatures() {
  CpuFeatures f;
#ifdef LOCKSTEP_X86
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.f16c = CpuidEcxHas(kCpuid1EcxF16C);
  f.pclmul = CpuidEcxHas(kCpuid1EcxPclmul | kCpuid1EcxSse41);
  f.avx512_clmul =
      f.pclmul && __builtin_cpu_supports("avx512f") && CpuidHasVpclmulqdq();
#endif
  return f;
}

const CpuFeatures& HostCpuFeatures() {
  static const CpuFeatures features = DetectCpuFeatures();
  return features;
}

}  // namespace lockstep
