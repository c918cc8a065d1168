#include "lockstep/format/zip.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "format/bytes.h"
#include "format/zip_records.h"

namespace lockstep {
namespace {

using internal::Hex;
using internal::InBounds;
using internal::LoadLe16;
using internal::LoadLe32;
using internal::LoadLe64;

using namespace internal::zip;  // NOLINT: the record constants

// Where the central directory lies, from the (zip64) end record.
struct Directory {
  uint64_t entries = 0;
  uint64_t size = 0;
  uint64_t offset = 0;
  uint64_t end = 0;  // offset of the first end record (cd must end before)
};

// Finds the end of central directory record: the last signature whose
// comment length reaches exactly the end of the archive; failing that, the
// last one whose comment fits (some tools append bytes after the comment).
StatusOr<size_t> FindEocd(std::string_view a, const std::string& name) {
  if (a.size() < kEocdSize) {
    return Status::Corruption(name,
                              "not a ZIP archive: " + std::to_string(a.size()) +
                                  " bytes is too short");
  }
  size_t lowest =
      a.size() - kEocdSize > kMax16 ? a.size() - kEocdSize - kMax16 : 0;
  std::optional<size_t> loose;
  for (size_t pos = a.size() - kEocdSize + 1; pos-- > lowest;) {
    if (LoadLe32(a.data() + pos) != kEocdSig) continue;
    size_t end = pos + kEocdSize + LoadLe16(a.data() + pos + 20);
    if (end == a.size()) return pos;
    if (end < a.size() && !loose) loose = pos;
  }
  if (loose) return *loose;
  return Status::Corruption(
      name, "not a ZIP archive: no end of central directory record");
}

// Reads the zip64 end record that the locator before `eocd` points to.
Status ReadZip64End(std::string_view a, const std::string& name, size_t eocd,
                    Directory* dir) {
  const char* loc = a.data() + eocd - kZip64LocatorSize;
  uint64_t off = LoadLe64(loc + 8);
  if (LoadLe32(loc + 4) != 0 || LoadLe32(loc + 16) > 1) {
    return Status::NotSupported(name, "multi-disk ZIP64 archive");
  }
  if (!InBounds(off, kZip64EocdSize, eocd - kZip64LocatorSize)) {
    return Status::Corruption(name, "ZIP64 end record offset " +
                                        std::to_string(off) +
                                        " is outside the archive");
  }
  const char* p = a.data() + off;
  if (LoadLe32(p) != kZip64EocdSig) {
    return Status::Corruption(
        name, "no ZIP64 end record at offset " + std::to_string(off));
  }
  if (LoadLe32(p + 16) != 0 || LoadLe32(p + 20) != 0) {
    return Status::NotSupported(name, "multi-disk ZIP64 archive");
  }
  dir->entries = LoadLe64(p + 32);
  dir->size = LoadLe64(p + 40);
  dir->offset = LoadLe64(p + 48);
  dir->end = off;
  return Status::Ok();
}

StatusOr<Directory> ReadEnd(std::string_view a, const std::string& name) {
  LOCKSTEP_ASSIGN_OR_RETURN(size_t eocd, FindEocd(a, name));
  const char* p = a.data() + eocd;
  Directory dir;
  uint16_t disk = LoadLe16(p + 4), cd_disk = LoadLe16(p + 6);
  dir.entries = LoadLe16(p + 10);
  dir.size = LoadLe32(p + 12);
  dir.offset = LoadLe32(p + 16);
  dir.end = eocd;
  if (eocd >= kZip64LocatorSize &&
      LoadLe32(a.data() + eocd - kZip64LocatorSize) == kZip64LocatorSig) {
    LOCKSTEP_RETURN_IF_ERROR(ReadZip64End(a, name, eocd, &dir));
  } else if ((disk != 0 && disk != kMax16) ||
             (cd_disk != 0 && cd_disk != kMax16)) {
    return Status::NotSupported(name, "multi-disk ZIP archive");
  }
  if (!InBounds(dir.offset, dir.size, dir.end)) {
    return Status::Corruption(
        name, "central directory (offset " + std::to_string(dir.offset) + ", " +
                  std::to_string(dir.size) + " bytes) is outside the archive");
  }
  if (dir.entries > dir.size / kCentralSize) {
    return Status::Corruption(
        name, std::to_string(dir.entries) + " entries cannot fit in a " +
                  std::to_string(dir.size) + "-byte central directory");
  }
  return dir;
}

// Applies a ZIP64 extra field: each 0xFFFFFFFF value in the header is
// replaced, in this order, by the next 8 bytes of the field.
Status ApplyZip64Extra(std::string_view extra, const std::string& subject,
                       ZipEntry* e) {
  uint64_t* wanted[] = {&e->uncompressed_size, &e->compressed_size,
                        &e->local_header_offset};
  bool need = false;
  for (uint64_t* v : wanted) need |= (*v == kMax32);
  if (!need) return Status::Ok();
  for (size_t i = 0; i + 4 <= extra.size();) {
    uint16_t id = LoadLe16(extra.data() + i);
    size_t len = LoadLe16(extra.data() + i + 2);
    if (len > extra.size() - i - 4) break;
    std::string_view body = extra.substr(i + 4, len);
    i += 4 + len;
    if (id != kZip64ExtraId) continue;
    size_t at = 0;
    for (uint64_t* v : wanted) {
      if (*v != kMax32) continue;
      if (at + 8 > body.size()) {
        return Status::Corruption(subject, "ZIP64 extra field too short");
      }
      *v = LoadLe64(body.data() + at);
      at += 8;
    }
    return Status::Ok();
  }
  return Status::Corruption(subject,
                            "size or offset is 0xFFFFFFFF but there is no "
                            "ZIP64 extra field");
}

}  // namespace

StatusOr<ZipReader> ZipReader::Open(std::string_view archive,
                                    std::string name) {
  ZipReader reader(archive, std::move(name));
  LOCKSTEP_RETURN_IF_ERROR(reader.ReadDirectory());
  return reader;
}

Status ZipReader::ReadDirectory() {
  LOCKSTEP_ASSIGN_OR_RETURN(Directory dir, ReadEnd(archive_, name_));
  size_t pos = dir.offset;
  uint64_t cd_end = dir.offset + dir.size;
  entries_.reserve(dir.entries);  // bounded by size / 46 above
  for (uint64_t i = 0; i < dir.entries; ++i) {
    ZipEntry e;
    LOCKSTEP_RETURN_IF_ERROR(ReadEntry(&pos, cd_end, &e));
    LOCKSTEP_RETURN_IF_ERROR(ResolveDataOffset(&e));
    if (!by_name_.emplace(e.name, entries_.size()).second) {
      return Status::Corruption(Subject(e), "appears twice in the archive");
    }
    entries_.push_back(std::move(e));
  }
  return Status::Ok();
}

Status ZipReader::ReadEntry(size_t* pos, uint64_t cd_end, ZipEntry* e) {
  std::string where =
      name_ + ": central directory at offset " + std::to_string(*pos);
  if (!InBounds(*pos, kCentralSize, cd_end)) {
    return Status::Corruption(where, "header runs past the directory's end");
  }
  const char* p = archive_.data() + *pos;
  if (LoadLe32(p) != kCentralSig) {
    return Status::Corruption(where, "bad signature " + Hex(LoadLe32(p)));
  }
  size_t name_len = LoadLe16(p + 28), extra_len = LoadLe16(p + 30),
         comment_len = LoadLe16(p + 32);
  if (!InBounds(*pos + kCentralSize, name_len + extra_len + comment_len,
                cd_end)) {
    return Status::Corruption(where,
                              "name or extra field runs past the "
                              "directory's end");
  }
  e->flags = LoadLe16(p + 8);
  e->method = LoadLe16(p + 10);
  e->crc32 = LoadLe32(p + 16);
  e->compressed_size = LoadLe32(p + 20);
  e->uncompressed_size = LoadLe32(p + 24);
  e->local_header_offset = LoadLe32(p + 42);
  e->name.assign(p + kCentralSize, name_len);
  std::string_view extra(p + kCentralSize + name_len, extra_len);
  *pos += kCentralSize + name_len + extra_len + comment_len;
  return ApplyZip64Extra(extra, Subject(*e), e);
}

Status ZipReader::ResolveDataOffset(ZipEntry* e) const {
  uint64_t off = e->local_header_offset;
  if (!InBounds(off, kLocalSize, archive_.size())) {
    return Status::Corruption(Subject(*e), "local header offset " +
                                               std::to_string(off) +
                                               " is outside the archive");
  }
  const char* p = archive_.data() + off;
  if (LoadLe32(p) != kLocalSig) {
    return Status::Corruption(
        Subject(*e), "no local header at offset " + std::to_string(off) +
                         " (signature " + Hex(LoadLe32(p)) + ")");
  }
  size_t name_len = LoadLe16(p + 26), extra_len = LoadLe16(p + 28);
  if (!InBounds(off + kLocalSize, name_len + extra_len, archive_.size()) ||
      std::string_view(p + kLocalSize, name_len) != e->name) {
    return Status::Corruption(Subject(*e), "local header at offset " +
                                               std::to_string(off) +
                                               " names another entry");
  }
  e->data_offset = off + kLocalSize + name_len + extra_len;
  if (!InBounds(e->data_offset, e->compressed_size, archive_.size())) {
    return Status::Corruption(
        Subject(*e), std::to_string(e->compressed_size) + " bytes at offset " +
                         std::to_string(e->data_offset) +
                         " run past the end of the " +
                         std::to_string(archive_.size()) + "-byte archive");
  }
  return Status::Ok();
}

const ZipEntry* ZipReader::Find(std::string_view entry_name) const {
  auto it = by_name_.find(entry_name);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

std::string ZipReader::Subject(const ZipEntry& entry) const {
  return name_ + ": zip entry '" + entry.name + "'";
}

}  // namespace lockstep
