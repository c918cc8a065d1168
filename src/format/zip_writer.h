// TorchZipWriter: builds an uncompressed ZIP archive in memory laid out as
// PyTorch's archive writer (caffe2/serialize/inline_container.cc over miniz)
// lays out a torch.save file, so that the bytes match torch 1.13's for the
// same records:
//
//   per record:  local header (30 B: version needed 0, flags 0x0808 = data
//                descriptor + UTF-8 names, method 0 STORED, time/date 0,
//                CRC and sizes 0) + name + extra + data + data descriptor
//                ("PK\7\8", CRC, sizes: 4 bytes each, 8 when ZIP64); an
//                empty record has flags 0x0800 and no data descriptor
//   the extra:   [ZIP64 field] + "FB" field of 'Z' bytes that pads the data
//                to a multiple of kZipDataAlignment (64) from the archive
//                start
//   then:        central directory (46 B + name [+ ZIP64 field] each),
//                ZIP64 end record (56 B), ZIP64 locator (20 B), end record
//                (22 B). torch always writes the ZIP64 end records.
//
// A record whose size or whose local header offset is >= `zip64_from`
// (0xFFFFFFFF, as miniz decides) gets a ZIP64 extra field (sizes, then
// offset, each only where needed) in both headers, 64-bit sizes in its data
// descriptor, and 0xFFFFFFFF in the 32-bit header fields it replaces.
// Private to src/format. Thread safety: not thread-safe (a builder).
#ifndef LOCKSTEP_SRC_FORMAT_ZIP_WRITER_H_
#define LOCKSTEP_SRC_FORMAT_ZIP_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::internal {

inline constexpr size_t kZipDataAlignment = 64;
inline constexpr uint64_t kZip64Threshold = 0xFFFFFFFF;

class TorchZipWriter {
 public:
  // Appends to `*out`, which must be empty. `zip64_from` lowers the ZIP64
  // threshold (tests exercise ZIP64 records without 4 GiB of data).
  // REQUIRES: out != nullptr, out->empty(); zip64_from >= 1.
  explicit TorchZipWriter(std::string* out,
                          uint64_t zip64_from = kZip64Threshold)
      : out_(out), zip64_from_(zip64_from) {}

  // At most how many bytes a record called `name` adds beyond its data, and
  // Finish() per record (to reserve the output).
  static size_t MaxOverhead(std::string_view name);

  // Appends a STORED record; `crc` is the CRC-32 of `data`.
  // REQUIRES: name.size() < 65536 - 64; Finish() not called.
  void AddRecord(std::string_view name, std::string_view data, uint32_t crc);

  // Appends the central directory and the end records.
  void Finish();

 private:
  struct Zip64 {  // which values a record's ZIP64 extra field holds
    bool sizes = false;
    bool offset = false;
    size_t FieldBytes() const;
  };
  Zip64 Zip64For(uint64_t size, uint64_t offset) const;
  size_t PaddingFor(uint64_t offset, size_t name_size, Zip64 z) const;
  void AppendCentral(std::string_view name, uint64_t size, uint32_t crc,
                     uint64_t offset);

  std::string* out_;
  const uint64_t zip64_from_;
  std::string central_;
  uint64_t records_ = 0;
};

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_FORMAT_ZIP_WRITER_H_
