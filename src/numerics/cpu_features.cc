#include "lockstep/numerics/cpu_features.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

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

const char* CpuLevelName(CpuLevel level) {
  switch (level) {
    case CpuLevel::kPortable:
      return "portable";
    case CpuLevel::kAvx2:
      return "avx2";
    case CpuLevel::kAvx512:
      return "avx512";
  }
  return "?";
}

std::optional<CpuLevel> ParseCpuLevel(std::string_view name) {
  for (CpuLevel l : kAllCpuLevels) {
    if (name == CpuLevelName(l)) return l;
  }
  return std::nullopt;
}

CpuLevel HostCpuLevel() {
  const CpuFeatures& f = HostCpuFeatures();
  if (!(f.avx2 && f.fma && f.f16c && f.pclmul)) return CpuLevel::kPortable;
  return f.avx512_clmul ? CpuLevel::kAvx512 : CpuLevel::kAvx2;
}

namespace {

CpuLevel LimitFromEnvironment() {
  const char* v = std::getenv("LOCKSTEP_CPU_LEVEL");
  if (v == nullptr || *v == '\0') return CpuLevel::kAvx512;
  std::optional<CpuLevel> l = ParseCpuLevel(v);
  if (l) return *l;
  std::fprintf(stderr,
               "[W] LOCKSTEP_CPU_LEVEL=%.40s: not portable, avx2 or avx512; "
               "ignored\n",
               v);
  return CpuLevel::kAvx512;
}

std::atomic<int>& Limit() {
  static std::atomic<int> limit{static_cast<int>(LimitFromEnvironment())};
  return limit;
}

}  // namespace

CpuLevel CpuLevelLimit() {
  return static_cast<CpuLevel>(Limit().load(std::memory_order_relaxed));
}

bool CpuLevelActive(CpuLevel level) {
  static const CpuLevel host = HostCpuLevel();
  return static_cast<int>(level) <= static_cast<int>(host) &&
         CpuLevelAllowed(level);
}

CpuLevel SetCpuLevelLimit(CpuLevel limit) {
  return static_cast<CpuLevel>(
      Limit().exchange(static_cast<int>(limit), std::memory_order_relaxed));
}

}  // namespace lockstep
