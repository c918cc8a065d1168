// Little-endian loads and bounds checks shared by the binary format readers
// (zip, pickle, pt). Private to src/format.
#ifndef LOCKSTEP_SRC_FORMAT_BYTES_H_
#define LOCKSTEP_SRC_FORMAT_BYTES_H_

#include <cstdint>
#include <string>

namespace lockstep::internal {

inline uint16_t LoadLe16(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint16_t>(u[0] | (u[1] << 8));
}

inline uint32_t LoadLe32(const char* p) {
  return LoadLe16(p) | (static_cast<uint32_t>(LoadLe16(p + 2)) << 16);
}

inline uint64_t LoadLe64(const char* p) {
  return LoadLe32(p) | (static_cast<uint64_t>(LoadLe32(p + 4)) << 32);
}

// True when [offset, offset + len) lies inside a buffer of `size` bytes,
// without overflowing.
inline bool InBounds(uint64_t offset, uint64_t len, uint64_t size) {
  return offset <= size && len <= size - offset;
}

// "0x4d2": hexadecimal, for signatures and sentinel values in messages.
inline std::string Hex(uint64_t v) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[v & 15]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_FORMAT_BYTES_H_
