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
// Thread safety: HostCpuFeatures() is safe to call from any thread (a
// function-local static); DetectCpuFeatures() is a pure query.
#ifndef LOCKSTEP_NUMERICS_CPU_FEATURES_H_
#define LOCKSTEP_NUMERICS_CPU_FEATURES_H_

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

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_CPU_FEATURES_H_
