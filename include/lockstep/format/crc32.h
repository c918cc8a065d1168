// CRC-32 (ISO-HDLC: the ZIP, gzip and zlib checksum; reflected polynomial
// 0xEDB88320, initial and final XOR 0xFFFFFFFF), the checksum every .pt
// entry records and msprobe's "md5" column holds.
//
// On x86 with PCLMULQDQ the bulk is folded 64 bytes at a time (256 with
// AVX-512 VPCLMULQDQ) with carry-less multiplies (the method of Gopal et al.,
// "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction",
// Intel 2009) and reduced by Barrett reduction; elsewhere, and for the last
// bytes, zlib's crc32. Both give the same value for every input
// (tests/format/crc32_test). Thread safety: pure functions.
#ifndef LOCKSTEP_FORMAT_CRC32_H_
#define LOCKSTEP_FORMAT_CRC32_H_

#include <cstdint>
#include <string_view>

#include "lockstep/numerics/cpu_features.h"

namespace lockstep {

// The CRC-32 of `data`.
uint32_t Crc32(std::string_view data);

// The CRC-32 of `data` following bytes whose CRC-32 is `crc` (0 for none):
// Crc32Update(Crc32Update(0, a), b) == Crc32Update(0, a + b).
uint32_t Crc32Update(uint32_t crc, std::string_view data);

// The CRC-32 of a + b from crc_a = CRC-32(a), crc_b = CRC-32(b) and
// b.size() (zlib's crc32_combine): chunks checked in parallel, merged.
uint32_t Crc32Combine(uint32_t crc_a, uint32_t crc_b, uint64_t size_b);

// CRC-32C (Castagnoli, reflected polynomial 0x82f63b78: TFRecord's framing
// and the probe's tensor checksums) of `data`, continuing from `crc` (0 to
// start), a byte at a time. Crc32c("123456789") == 0xe3069283.
uint32_t Crc32c(std::string_view data, uint32_t crc = 0);

// The path CRC-32 takes now: the fastest the CPU has within CpuLevelLimit()
// (numerics/cpu_features.h): kPortable zlib, kAvx2 PCLMULQDQ (16-byte
// lanes), kAvx512 VPCLMULQDQ (64-byte lanes).
CpuLevel Crc32Level();

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_CRC32_H_
