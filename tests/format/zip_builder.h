// Test helper: builds ZIP archives in memory, with the variations that
// readers meet (torch's 64-byte alignment and data descriptors, forced ZIP64
// records, DEFLATE, archive comments), and a torch.save-like .pt builder on
// top of it. Header-only; tests only.
#ifndef LOCKSTEP_TESTS_FORMAT_ZIP_BUILDER_H_
#define LOCKSTEP_TESTS_FORMAT_ZIP_BUILDER_H_

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/format/zip.h"

namespace lockstep::testing {

struct ZipBuildEntry {
  std::string name;
  std::string data;
  bool deflate = false;
  // `data` is already raw DEFLATE of `inflated_size` bytes whose CRC-32 is
  // `inflated_crc` (a deflate bomb, too large to build in memory).
  bool predeflated = false;
  uint64_t inflated_size = 0;
  uint32_t inflated_crc = 0;
};

// The entry's uncompressed size.
inline uint64_t DataSize(const ZipBuildEntry& e) {
  return e.predeflated ? e.inflated_size : e.data.size();
}

struct ZipBuildOptions {
  bool zip64 = false;            // 0xFFFFFFFF fields + ZIP64 extras/records
  bool data_descriptor = false;  // zeros in local headers, as torch writes
  size_t align = 0;              // pad data to this alignment ("FB" extra)
  bool zero_crc = false;         // record CRC 0 ("not computed")
  std::string comment;
};

// Appends `bytes` bytes of `v`, little-endian (zeros beyond the 8th).
inline void PutLe(std::string* s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    s->push_back(i < 8 ? static_cast<char>(v >> (8 * i)) : '\0');
  }
}

inline std::string RawDeflate(const std::string& in) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, in.size()) + 16, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// One entry's stored form.
struct ZipBody {
  std::string bytes;  // as stored (deflated or not)
  uint32_t crc = 0;
  uint16_t flags = 0;
  uint16_t method = 0;
};

inline ZipBody MakeBody(const ZipBuildEntry& e, const ZipBuildOptions& o) {
  ZipBody b;
  b.bytes = e.deflate && !e.predeflated ? RawDeflate(e.data) : e.data;
  b.crc = o.zero_crc ? 0 : e.predeflated ? e.inflated_crc : Crc32(e.data);
  b.flags = o.data_descriptor ? 0x0808 : 0x0800;
  b.method = e.deflate || e.predeflated ? 8 : 0;
  return b;
}

inline std::string LocalRecord(const ZipBuildEntry& e, const ZipBody& b,
                               uint64_t offset, const ZipBuildOptions& o) {
  std::string extra, out;
  if (o.align) {
    size_t at = offset + 30 + e.name.size() + 4;
    size_t pad = (o.align - at % o.align) % o.align;
    PutLe(&extra, 0x4246, 2);  // "FB", as torch pads
    PutLe(&extra, pad, 2);
    extra.append(pad, 'Z');
  }
  bool dd = o.data_descriptor;
  PutLe(&out, 0x04034b50, 4);
  PutLe(&out, 20, 2);
  PutLe(&out, b.flags, 2);
  PutLe(&out, b.method, 2);
  PutLe(&out, 0, 4);  // time, date
  PutLe(&out, dd ? 0 : b.crc, 4);
  PutLe(&out, dd ? 0 : b.bytes.size(), 4);
  PutLe(&out, dd ? 0 : DataSize(e), 4);
  PutLe(&out, e.name.size(), 2);
  PutLe(&out, extra.size(), 2);
  out += e.name + extra + b.bytes;
  if (dd) {
    PutLe(&out, 0x08074b50, 4);
    PutLe(&out, b.crc, 4);
    PutLe(&out, b.bytes.size(), 4);
    PutLe(&out, DataSize(e), 4);
  }
  return out;
}

inline std::string CentralRecord(const ZipBuildEntry& e, const ZipBody& b,
                                 uint64_t offset, const ZipBuildOptions& o) {
  const uint32_t kFF = 0xFFFFFFFF;
  std::string extra, cd;
  if (o.zip64) {
    PutLe(&extra, 0x0001, 2);
    PutLe(&extra, 24, 2);
    PutLe(&extra, DataSize(e), 8);
    PutLe(&extra, b.bytes.size(), 8);
    PutLe(&extra, offset, 8);
  }
  PutLe(&cd, 0x02014b50, 4);
  PutLe(&cd, 45, 2);
  PutLe(&cd, 45, 2);
  PutLe(&cd, b.flags, 2);
  PutLe(&cd, b.method, 2);
  PutLe(&cd, 0, 4);
  PutLe(&cd, b.crc, 4);
  PutLe(&cd, o.zip64 ? kFF : b.bytes.size(), 4);
  PutLe(&cd, o.zip64 ? kFF : DataSize(e), 4);
  PutLe(&cd, e.name.size(), 2);
  PutLe(&cd, extra.size(), 2);
  PutLe(&cd, 0, 2 + 2 + 2 + 4);  // comment len, disk, attrs
  PutLe(&cd, o.zip64 ? kFF : offset, 4);
  return cd + e.name + extra;
}

inline std::string EndRecords(uint64_t n, uint64_t cd_offset, uint64_t cd_size,
                              const ZipBuildOptions& o) {
  std::string out;
  if (o.zip64) {
    uint64_t z64 = cd_offset + cd_size;
    PutLe(&out, 0x06064b50, 4);
    PutLe(&out, 44, 8);
    PutLe(&out, 45, 2);
    PutLe(&out, 45, 2);
    PutLe(&out, 0, 8);  // disks
    PutLe(&out, n, 8);
    PutLe(&out, n, 8);
    PutLe(&out, cd_size, 8);
    PutLe(&out, cd_offset, 8);
    PutLe(&out, 0x07064b50, 4);
    PutLe(&out, 0, 4);
    PutLe(&out, z64, 8);
    PutLe(&out, 1, 4);
  }
  PutLe(&out, 0x06054b50, 4);
  PutLe(&out, 0, 4);
  PutLe(&out, o.zip64 ? 0xFFFF : n, 2);
  PutLe(&out, o.zip64 ? 0xFFFF : n, 2);
  PutLe(&out, o.zip64 ? 0xFFFFFFFF : cd_size, 4);
  PutLe(&out, o.zip64 ? 0xFFFFFFFF : cd_offset, 4);
  PutLe(&out, o.comment.size(), 2);
  return out + o.comment;
}

inline std::string BuildZip(const std::vector<ZipBuildEntry>& entries,
                            const ZipBuildOptions& o = {}) {
  std::string out, cd;
  for (const ZipBuildEntry& e : entries) {
    ZipBody b = MakeBody(e, o);
    uint64_t offset = out.size();
    out += LocalRecord(e, b, offset, o);
    cd += CentralRecord(e, b, offset, o);
  }
  uint64_t cd_offset = out.size();
  return out + cd + EndRecords(entries.size(), cd_offset, cd.size(), o);
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_FORMAT_ZIP_BUILDER_H_
