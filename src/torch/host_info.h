// Facts about the host and process that env_capture.cc records, read
// without LibTorch: /proc files, uname, the loaded BLAS. Linux first; on
// other systems the functions return "" / nullopt rather than fail.
// Private to the torch layer. Thread safety: pure functions.
#ifndef LOCKSTEP_SRC_TORCH_HOST_INFO_H_
#define LOCKSTEP_SRC_TORCH_HOST_INFO_H_

#include <optional>
#include <string>

namespace lockstep::host {

// "model name" of the first CPU in /proc/cpuinfo ("" when unknown).
std::string CpuModel();

// The numerics-relevant CPU features present (vector ISAs, FMA, F16C,
// AVX-512 and AMX subsets, ARM SIMD/SVE/bf16), space-separated in a fixed
// order, from /proc/cpuinfo's "flags" / "Features" line.
std::string CpuFeatures();

// MXCSR flush-to-zero / denormals-are-zero bits of the calling thread on
// x86 ("ftz=0 daz=0"); nullopt elsewhere.
std::optional<std::string> DenormalFlags();

// Paths of the BLAS/LAPACK/MKL libraries mapped into this process (from
// /proc/self/maps), space-separated in load order; "" when none is found.
std::string LoadedBlasLibraries();

// OpenBLAS's own description (openblas_get_config(): version, core type,
// threading) and thread count, when OpenBLAS is loaded.
std::optional<std::string> OpenBlasConfig();
std::optional<int> OpenBlasThreads();

std::string Hostname();
std::string Kernel();        // "Linux 6.1.0-18-amd64"
std::string Libc();          // "glibc 2.36"
std::string UtcNow();        // "2024-05-01T12:00:00Z"
std::string ThisCompiler();  // the compiler of lockstep: "GCC 12.2.0"

}  // namespace lockstep::host

#endif  // LOCKSTEP_SRC_TORCH_HOST_INFO_H_
