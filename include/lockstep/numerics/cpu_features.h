// The x86 instruction-set extensions that lockstep's fast kernels use,
// detected once at run time.
//
// Why not __builtin_cpu_supports for all of them: GCC knows "f16c" but clang
// does not (a compile error), so F16C is read from CPUID directly (leaf 1,
// ECX bit 29), and PCLMULQDQ and SSE4.1 likewise (bits 1 and 19), and
// VPCLMULQDQ (leaf 7, ECX bit 10). AVX2 and FMA
// go through __builtin_cpu_supports, which both compilers accept and which also
// checks that the OS saves the YMM registers. On a CPU that is not x86, every
// feature is false.
//
// One dispatch for every kernel with fast paths (the statistics and pair
// metric kernels, half/bfloat16 conversion, CRC-32, the grad scaler's
// unscale-and-check): each takes the fastest path that the CPU has and that
// is not above CpuLevelLimit(). The limit starts at LOCKSTEP_CPU_LEVEL
// (portable, avx2 or avx512; unset: avx512, every path the CPU has), so a
// whole program can be run on the portable paths, as ATEN_CPU_CAPABILITY
// does for LibTorch's; tests set it per case (SetCpuLevelLimit) and check
// each kernel on each path against the same reference.
//
// Thread safety: HostCpuFeatures() is safe to call from any thread (a
// function-local static); DetectCpuFeatures() is a pure query.
// CpuLevelLimit() is an atomic read; SetCpuLevelLimit while kernels run
// lets a kernel mix paths between its calls (each path gives the same
// results within its documented tolerance), so tests set it between cases.
#ifndef LOCKSTEP_NUMERICS_CPU_FEATURES_H_
#define LOCKSTEP_NUMERICS_CPU_FEATURES_H_

#include <optional>
#include <string_view>

namespace lockstep {

struct CpuFeatures {
  bool avx2 = false;    // AVX2, with the OS saving YMM state
  bool fma = false;     // FMA3
  bool f16c = false;    // F16C (VCVTPH2PS/VCVTPS2PH); usable only with avx2
  bool pclmul = false;  // PCLMULQDQ with SSE4.1 (carry-less multiply: CRC-32)
  // AVX-512F (with the OS saving ZMM state) and VPCLMULQDQ: four carry-less
  // multiplies per instruction.
  bool avx512_clmul = false;
};

// Asks the CPU now (CPUID / __builtin_cpu_supports).
CpuFeatures DetectCpuFeatures();

// DetectCpuFeatures(), asked once per process.
const CpuFeatures& HostCpuFeatures();

// The kernel paths, slowest first. kAvx2: AVX2 with FMA and F16C (the
// metric, statistics and conversion kernels, the grad scaler's) and
// PCLMULQDQ (CRC-32). kAvx512: AVX-512F with VPCLMULQDQ (CRC-32).
enum class CpuLevel : int { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };
inline constexpr CpuLevel kAllCpuLevels[] = {
    CpuLevel::kPortable, CpuLevel::kAvx2, CpuLevel::kAvx512};

// "portable", "avx2", "avx512"; and back (nullopt for anything else).
const char* CpuLevelName(CpuLevel level);
std::optional<CpuLevel> ParseCpuLevel(std::string_view name);

// The fastest level this CPU can run (kAvx512 needs AVX-512F with
// VPCLMULQDQ, kAvx2 needs AVX2, FMA, F16C and PCLMULQDQ).
CpuLevel HostCpuLevel();

// The highest level kernels may use. Starts at LOCKSTEP_CPU_LEVEL (a value
// that is not a level name is said once on stderr and ignored), else
// kAvx512.
CpuLevel CpuLevelLimit();
// Sets the limit; returns the previous one.
CpuLevel SetCpuLevelLimit(CpuLevel limit);
// Whether the limit allows `level`'s paths (whatever the CPU has).
inline bool CpuLevelAllowed(CpuLevel level) {
  return static_cast<int>(level) <= static_cast<int>(CpuLevelLimit());
}
// Whether kernels take `level`'s paths now: the CPU has the level
// (HostCpuLevel) and the limit allows it. The one question every kernel
// with fast paths asks.
bool CpuLevelActive(CpuLevel level);

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_CPU_FEATURES_H_
