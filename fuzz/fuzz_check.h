// What the fuzz targets share: a check that stops the run (a crash libFuzzer
// and the bounded driver report), a checksum that reads every byte of a
// tensor (out-of-bounds reads show under ASan), and YAML's double-quoted
// form of a string (for the YAML readers' round trips).
#ifndef LOCKSTEP_FUZZ_FUZZ_CHECK_H_
#define LOCKSTEP_FUZZ_FUZZ_CHECK_H_

#include <cstdint>
#include <cstdlib>
#include <string>

#include "lockstep/format/tensor.h"

namespace lockstep::fuzz {

inline void Require(bool ok) {
  if (!ok) std::abort();
}

// FNV-1a over the tensor's bytes.
inline uint64_t Checksum(const Tensor& t) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < t.nbytes(); ++i) {
    h = (h ^ static_cast<uint8_t>(t.data()[i])) * 1099511628211ull;
  }
  return h;
}

// `s` as a double-quoted YAML scalar (\" \\ \n \t escaped).
inline std::string YamlQuoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_FUZZ_CHECK_H_
