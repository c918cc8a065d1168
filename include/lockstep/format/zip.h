// ZipReader: a read-only view of a ZIP archive held in memory (usually a
// memory-mapped file), as torch.save writes them since torch 1.6.
//
// What is read (PKWARE APPNOTE 6.3, the parts torch and Python's zipfile use):
//   [local header 30 B + name + extra][data][data descriptor]...   per entry
//   [central directory header 46 B + name + extra + comment]...    per entry
//   [zip64 end of central directory 56 B][zip64 locator 20 B]      optional
//   [end of central directory 22 B + comment (< 64 KiB)]
// All integers are little-endian. The central directory is authoritative for
// sizes (torch writes zeros in local headers and a data descriptor after the
// data); local headers are read only to find where the data begins. ZIP64
// extra fields (id 0x0001) replace 0xFFFFFFFF sizes and offsets. torch.save
// writes STORED entries whose data is 64-byte aligned (padding in an "FB"
// extra field); Data() returns those as zero-copy views. DEFLATE entries are
// inflated with zlib. Encryption, multi-disk archives and other methods are
// rejected with NotSupported.
//
// Every offset and size is checked against the archive size before use, so
// no input makes the reader read out of bounds or allocate more than the
// caller's limit.
//
// Thread safety: immutable after Open(); const methods may be called from
// many threads at once.
#ifndef LOCKSTEP_FORMAT_ZIP_H_
#define LOCKSTEP_FORMAT_ZIP_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/crc32.h"  // Crc32, which the entries record

namespace lockstep {

// One file in the archive, from its central directory header (with ZIP64
// values applied) and its local header.
struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // kZipStored or kZipDeflated
  uint16_t flags = 0;   // general-purpose bit flags
  uint32_t crc32 = 0;   // as recorded; 0 may mean "not computed" (see below)
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
  uint64_t data_offset = 0;  // first byte of the (compressed) data
};

inline constexpr uint16_t kZipStored = 0;
inline constexpr uint16_t kZipDeflated = 8;

class ZipReader {
 public:
  // Parses the archive's directory. `archive` is the whole file; `name` names
  // it in error messages ("x.pt"). Returns Corruption when there is no end of
  // central directory record or any record is truncated, out of bounds or
  // inconsistent; NotSupported for multi-disk archives.
  // REQUIRES: `archive` stays valid while the reader and any view returned by
  // Data() are used. The reader does not own it.
  static StatusOr<ZipReader> Open(std::string_view archive, std::string name);

  const std::string& name() const { return name_; }
  // Entries in central-directory order.
  const std::vector<ZipEntry>& entries() const { return entries_; }
  // The entry called `entry_name`, or nullptr.
  const ZipEntry* Find(std::string_view entry_name) const;

  // The uncompressed contents of `entry`. A STORED entry is returned as a
  // view into the archive (no copy; `scratch` unused); a DEFLATE entry is
  // inflated into `*scratch` (replacing its contents) and the view points
  // there. Fails with NotSupported for other methods or encryption, with
  // InvalidArgument when the uncompressed size exceeds `max_bytes`, and with
  // Corruption when the data do not inflate to exactly the recorded size or
  // the CRC of inflated data is wrong.
  // REQUIRES: `entry` is one of entries(); `scratch` is not null.
  StatusOr<std::string_view> Data(const ZipEntry& entry, std::string* scratch,
                                  uint64_t max_bytes = UINT64_MAX) const;

  // Checks the CRC-32 of `data` (the entry's uncompressed contents, as
  // Data() returned them) against the recorded value. A recorded CRC of 0
  // for non-empty data is taken as "not computed" (torch >= 2.4 can skip
  // it) and passes. Costs one pass over the data.
  Status VerifyCrc(const ZipEntry& entry, std::string_view data) const;

  // "x.pt: zip entry 'x/data/0'": the subject for messages about `entry`.
  std::string Subject(const ZipEntry& entry) const;

 private:
  ZipReader(std::string_view archive, std::string name)
      : archive_(archive), name_(std::move(name)) {}
  Status ReadDirectory();
  Status ReadEntry(size_t* pos, uint64_t cd_end, ZipEntry* entry);
  Status ResolveDataOffset(ZipEntry* entry) const;

  std::string_view archive_;
  std::string name_;
  std::vector<ZipEntry> entries_;
  std::map<std::string, size_t, std::less<>> by_name_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_ZIP_H_
