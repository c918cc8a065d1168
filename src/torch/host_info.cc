#include "torch/host_info.h"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace lockstep::host {
namespace {

// Features that select different kernels (and so may change results).
constexpr std::array<const char*, 26> kFeatures = {
    "sse4_1",   "sse4_2",      "avx",         "avx2",        "fma",
    "f16c",     "avx512f",     "avx512dq",    "avx512cd",    "avx512bw",
    "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_bf16",
    "amx_tile", "amx_int8",    "avx_vnni",    "asimd",       "fphp",
    "asimdhp",  "asimddp",     "sve",         "sve2",        "bf16",
    "i8mm"};

// The value after "key<spaces>: " of the first /proc/cpuinfo line that
// starts with `key`.
std::string CpuInfoValue(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t v = line.find_first_not_of(' ', colon + 1);
    return v == std::string::npos ? "" : line.substr(v);
  }
  return "";
}

template <typename Fn>
Fn* Symbol(const char* name) {
  return reinterpret_cast<Fn*>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

std::string CpuModel() { return CpuInfoValue("model name"); }

std::string CpuFeatures() {
  std::string flags = CpuInfoValue("flags");
  if (flags.empty()) flags = CpuInfoValue("Features");
  std::istringstream in(flags);
  std::set<std::string> have;
  for (std::string f; in >> f;) have.insert(f);
  std::string out;
  for (const char* f : kFeatures) {
    if (!have.count(f)) continue;
    if (!out.empty()) out += ' ';
    out += f;
  }
  return out;
}

std::optional<std::string> DenormalFlags() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned csr = _mm_getcsr();
  std::string s = "ftz=";
  s += (csr & 0x8000) ? '1' : '0';
  s += " daz=";
  s += (csr & 0x0040) ? '1' : '0';
  return s;
#else
  return std::nullopt;
#endif
}

std::string LoadedBlasLibraries() {
  std::ifstream in("/proc/self/maps");
  std::vector<std::string> libs;
  std::string line;
  while (std::getline(in, line)) {
    size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    std::string base = path.substr(path.rfind('/') + 1);
    bool blas = base.find("blas") != std::string::npos ||
                base.find("lapack") != std::string::npos ||
                base.rfind("libmkl", 0) == 0;
    bool seen = false;
    for (const auto& l : libs) seen = seen || l == path;
    if (blas && !seen) libs.push_back(path);
  }
  std::string out;
  for (const auto& l : libs) {
    if (!out.empty()) out += ' ';
    out += l;
  }
  return out;
}

std::optional<std::string> OpenBlasConfig() {
  auto* fn = Symbol<char*()>("openblas_get_config");
  if (fn == nullptr) return std::nullopt;
  const char* c = fn();
  return c ? std::optional<std::string>(c) : std::nullopt;
}

std::optional<int> OpenBlasThreads() {
  auto* fn = Symbol<int()>("openblas_get_num_threads");
  if (fn == nullptr) return std::nullopt;
  return fn();
}

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

std::string Kernel() {
  utsname u{};
  if (uname(&u) != 0) return "";
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

std::string Libc() {
#if defined(__GLIBC__)
  return std::string("glibc ") + gnu_get_libc_version();
#else
  return "";
#endif
}

std::string UtcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string ThisCompiler() {
#if defined(__clang__)
  return "Clang " __clang_version__;
#elif defined(__GNUC__)
  return "GCC " __VERSION__;
#else
  return "unknown";
#endif
}

}  // namespace lockstep::host
