// A small, strict zip reader for tests: walks the central directory, checks
// every local header and CRC-32, and inflates stored or deflated members.
// Used to check that the xlsx writer's output is a valid zip and to look
// inside it.
#ifndef LOCKSTEP_TESTS_REPORT_ZIP_READER_H_
#define LOCKSTEP_TESTS_REPORT_ZIP_READER_H_

#include <zlib.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace lockstep::testing {

inline uint32_t Le(std::string_view b, size_t at, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = v << 8 | static_cast<unsigned char>(b[at + i]);
  return v;
}

inline bool Inflate(std::string_view in, size_t out_size, std::string* out) {
  out->assign(out_size, '\0');
  z_stream z = {};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out->data());
  z.avail_out = static_cast<uInt>(out_size);
  int rc = inflate(&z, Z_FINISH);
  inflateEnd(&z);
  return rc == Z_STREAM_END && z.total_out == out_size;
}

// Reads one member whose central directory record starts at `cd`; returns
// the size of that record, or 0 (and sets *error) when anything is wrong.
inline size_t ReadMember(std::string_view zip, size_t cd,
                         std::map<std::string, std::string>* files,
                         std::string* error) {
  auto fail = [error](const std::string& why) {
    *error = why;
    return size_t{0};
  };
  if (cd + 46 > zip.size() || Le(zip, cd, 4) != 0x02014b50)
    return fail("bad central record");
  uint32_t method = Le(zip, cd + 10, 2), crc = Le(zip, cd + 16, 4);
  uint32_t csize = Le(zip, cd + 20, 4), usize = Le(zip, cd + 24, 4);
  size_t name_len = Le(zip, cd + 28, 2), extra = Le(zip, cd + 30, 2),
         comment = Le(zip, cd + 32, 2);
  size_t local = Le(zip, cd + 42, 4);
  std::string name(zip.substr(cd + 46, name_len));
  if (local + 30 > zip.size() || Le(zip, local, 4) != 0x04034b50)
    return fail("bad local header " + name);
  size_t data = local + 30 + Le(zip, local + 26, 2) + Le(zip, local + 28, 2);
  if (data + csize > zip.size()) return fail("truncated " + name);
  std::string content;
  std::string_view raw = zip.substr(data, csize);
  if (method == 0) {
    content.assign(raw);
  } else if (method != 8 || !Inflate(raw, usize, &content)) {
    return fail("cannot inflate " + name);
  }
  uLong actual = crc32(0, reinterpret_cast<const Bytef*>(content.data()),
                       static_cast<uInt>(content.size()));
  if (actual != crc) return fail("CRC mismatch in " + name);
  (*files)[name] = std::move(content);
  return 46 + name_len + extra + comment;
}

// Members by name, or an empty map with *error set.
inline std::map<std::string, std::string> ReadZip(std::string_view zip,
                                                  std::string* error) {
  std::map<std::string, std::string> files;
  size_t eocd = zip.size() >= 22 ? zip.rfind(std::string_view("PK\x05\x06", 4))
                                 : std::string_view::npos;
  if (eocd == std::string_view::npos || eocd + 22 > zip.size()) {
    *error = "no end of central directory";
    return {};
  }
  size_t count = Le(zip, eocd + 10, 2), at = Le(zip, eocd + 16, 4);
  for (size_t i = 0; i < count; ++i) {
    size_t n = ReadMember(zip, at, &files, error);
    if (n == 0) return {};
    at += n;
  }
  return files;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_REPORT_ZIP_READER_H_
