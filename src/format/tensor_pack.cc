// Reading dump_tensor_data.pack: its index (checked whole before any entry
// is used) and its tensors, zero-copy from a memory map.
#include "lockstep/format/tensor_pack.h"

#include <algorithm>
#include <unordered_set>

#include "format/bytes.h"
#include "format/str_cat.h"
#include "lockstep/format/crc32.h"
#include "lockstep/format/npy.h"

namespace lockstep {
namespace {

using internal::InBounds;
using internal::LoadLe32;
using internal::LoadLe64;

// A data CRC-32 of this many bytes or more, over bytes viewed in place, is
// left to whoever reads the bytes (a streamed compare reads them once, chunk
// by chunk; checking here would fault every page of the map in first).
constexpr uint64_t kPackDeferCrcFromBytes = uint64_t{1} << 20;

std::string PackNum(uint64_t v) { return std::to_string(v); }

struct PackFooter {
  uint64_t index_offset = 0;
  uint64_t index_size = 0;
  uint32_t count = 0;
  uint32_t index_crc = 0;
};

Status CheckPackHeader(std::string_view file, std::string_view subject,
                       uint32_t* alignment) {
  if (file.size() < kPackHeaderSize ||
      file.substr(0, kPackMagic.size()) != kPackMagic) {
    return Status::Corruption(subject, "not a lockstep tensor pack (no magic)");
  }
  uint32_t version = LoadLe32(file.data() + 8);
  if (version != kPackVersion) {
    return Status::NotSupported(
        subject,
        StrCat("pack version ", PackNum(version), "; this lockstep reads ",
               PackNum(kPackVersion), ". Note: use a newer lockstep"));
  }
  *alignment = LoadLe32(file.data() + 12);
  if (*alignment < 64 || *alignment > kPackMaxAlignment ||
      (*alignment & (*alignment - 1)) != 0) {
    return Status::Corruption(subject,
                              StrCat("alignment ", PackNum(*alignment),
                                     " is not a power of two in [64, 1 MiB]"));
  }
  return Status::Ok();
}

StatusOr<PackFooter> ReadPackFooter(std::string_view file,
                                    std::string_view subject) {
  if (file.size() < kPackHeaderSize + kPackFooterSize ||
      file.substr(file.size() - kPackEndMagic.size()) != kPackEndMagic) {
    return Status::Corruption(
        subject,
        "no index: the pack was not finished (its writer crashed, was "
        "killed, ran out of space or is still writing) or it was truncated; "
        "its tensors are not read. Note: dump that step again");
  }
  const char* p = file.data() + file.size() - kPackFooterSize;
  PackFooter f{LoadLe64(p), LoadLe64(p + 8), LoadLe32(p + 16),
               LoadLe32(p + 20)};
  uint64_t area = file.size() - kPackFooterSize;
  if (f.index_offset < kPackHeaderSize || f.index_offset % 8 != 0 ||
      !InBounds(f.index_offset, f.index_size, area) ||
      f.index_offset + f.index_size != area) {
    return Status::Corruption(
        subject,
        StrCat("the footer's index (offset ", PackNum(f.index_offset), ", ",
               PackNum(f.index_size),
               " bytes) does not end where the footer begins (", PackNum(area),
               "): the file was truncated, extended or damaged"));
  }
  if (f.count > f.index_size / kPackRecordSize) {
    return Status::Corruption(
        subject,
        StrCat("the footer counts ", PackNum(f.count), " entries; an index of ",
               PackNum(f.index_size), " bytes holds at most ",
               PackNum(f.index_size / kPackRecordSize)));
  }
  uint32_t crc = Crc32(file.substr(f.index_offset, f.index_size));
  if (crc != f.index_crc) {
    return Status::Corruption(
        subject, StrCat("the index's CRC-32 is ", internal::Hex(crc),
                        ", the footer records ", internal::Hex(f.index_crc)));
  }
  return f;
}

// One record at `*at` of the index; advances *at.
StatusOr<PackEntry> ReadPackRecord(std::string_view index, size_t* at,
                                   uint64_t entry_end, uint32_t alignment,
                                   std::string_view subject) {
  auto bad = [&](const std::string& what) {
    return Status::Corruption(
        subject, StrCat("index record at ", PackNum(*at), ": ", what));
  };
  if (!InBounds(*at, kPackRecordSize, index.size())) return bad("truncated");
  const char* p = index.data() + *at;
  PackEntry e;
  e.offset = LoadLe64(p);
  e.size = LoadLe64(p + 8);
  e.head = LoadLe32(p + 16);
  e.head_crc = LoadLe32(p + 20);
  e.data_crc = LoadLe32(p + 24);
  uint32_t name_size = LoadLe32(p + 28);
  if (!InBounds(*at + kPackRecordSize, name_size, index.size()))
    return bad(
        StrCat("name of ", PackNum(name_size), " bytes runs past the index"));
  e.name.assign(p + kPackRecordSize, name_size);
  if (!IsValidPackName(e.name))
    return bad("the name is empty, too long, '.', '..' or has '/' or NUL");
  if (e.offset < kPackHeaderSize || e.offset % alignment != 0 ||
      !InBounds(e.offset, e.size, entry_end)) {
    return bad(StrCat("entry '", e.name, "' (offset ", PackNum(e.offset), ", ",
                      PackNum(e.size),
                      " bytes) is unaligned or outside the entry area [",
                      PackNum(kPackHeaderSize), ", ", PackNum(entry_end), ")"));
  }
  if (e.head < kNpyMagic.size() + 4 || e.head > e.size)
    return bad(
        StrCat("entry '", e.name, "': header of ", PackNum(e.head), " bytes"));
  *at += kPackRecordSize + name_size;
  return e;
}

// Entries may be in any order in the index but must not share a byte.
Status CheckPackDisjoint(const std::vector<PackEntry>& entries,
                         std::string_view subject) {
  std::vector<const PackEntry*> by_offset;
  by_offset.reserve(entries.size());
  for (const PackEntry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const PackEntry* a, const PackEntry* b) {
              return a->offset < b->offset;
            });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const PackEntry& a = *by_offset[i - 1];
    const PackEntry& b = *by_offset[i];
    if (a.offset + a.size > b.offset) {
      return Status::Corruption(
          subject, StrCat("entries '", a.name, "' and '", b.name, "' overlap"));
    }
  }
  return Status::Ok();
}

}  // namespace

bool IsValidPackName(std::string_view n) {
  return !n.empty() && n.size() <= kPackMaxNameSize && n != "." && n != ".." &&
         n.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

StatusOr<std::vector<PackEntry>> ParsePackIndex(std::string_view file,
                                                std::string_view subject) {
  uint32_t alignment = 0;
  LOCKSTEP_RETURN_IF_ERROR(CheckPackHeader(file, subject, &alignment));
  LOCKSTEP_ASSIGN_OR_RETURN(PackFooter f, ReadPackFooter(file, subject));
  std::string_view index = file.substr(f.index_offset, f.index_size);
  std::vector<PackEntry> entries;
  entries.reserve(f.count);
  std::unordered_set<std::string_view> names;
  size_t at = 0;
  for (uint32_t i = 0; i < f.count; ++i) {
    LOCKSTEP_ASSIGN_OR_RETURN(
        PackEntry e,
        ReadPackRecord(index, &at, f.index_offset, alignment, subject));
    entries.push_back(std::move(e));
  }
  if (at != index.size()) {
    return Status::Corruption(
        subject, StrCat("the index has ", PackNum(index.size() - at),
                        " bytes after its ", PackNum(f.count), " records"));
  }
  for (const PackEntry& e : entries) {
    if (!names.insert(e.name).second)
      return Status::Corruption(subject,
                                StrCat("entry '", e.name, "' appears twice"));
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckPackDisjoint(entries, subject));
  return entries;
}

std::string_view PackEntryData(std::string_view file, const PackEntry& e) {
  return file.substr(e.offset + e.head, e.size - e.head);
}

StatusOr<std::shared_ptr<const PackReader>> PackReader::Open(
    const std::string& path) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                            MappedFile::Open(path, /*populate=*/false,
                                             /*regular_only=*/true));
  const MappedFile* map = file.get();
  return Make(std::move(file), map->view(), path, map);
}

StatusOr<std::shared_ptr<const PackReader>> PackReader::FromBytes(
    std::shared_ptr<const std::string> bytes, std::string subject) {
  std::string_view view = *bytes;
  return Make(std::move(bytes), view, std::move(subject), nullptr);
}

StatusOr<std::shared_ptr<const PackReader>> PackReader::Make(
    std::shared_ptr<const void> owner, std::string_view bytes, std::string path,
    const MappedFile* map) {
  std::shared_ptr<PackReader> r(new PackReader());
  r->owner_ = std::move(owner);
  r->bytes_ = bytes;
  r->path_ = std::move(path);
  r->map_ = map;
  StatusOr<std::vector<PackEntry>> entries = ParsePackIndex(bytes, r->path_);
  LOCKSTEP_RETURN_IF_ERROR(r->CheckIntact());
  LOCKSTEP_RETURN_IF_ERROR(entries.status());
  r->entries_ = std::move(*entries);
  r->by_name_.reserve(r->entries_.size());
  for (size_t i = 0; i < r->entries_.size(); ++i)
    r->by_name_.emplace(r->entries_[i].name, i);
  return std::shared_ptr<const PackReader>(std::move(r));
}

Status PackReader::CheckIntact() const {
  return map_ == nullptr ? Status::Ok() : map_->CheckIntact();
}

const PackEntry* PackReader::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

StatusOr<Tensor> PackReader::Read(std::string_view name) const {
  const PackEntry* e = Find(name);
  if (e == nullptr) {
    return Status::NotFound(path(),
                            StrCat("no entry '", name, "' in the pack"));
  }
  std::string subject = StrCat(path(), ": entry '", name, "'");
  std::string_view bytes = bytes_.substr(e->offset, e->size);
  std::string_view data = bytes.substr(e->head);
  if (Crc32(bytes.substr(0, e->head)) != e->head_crc)
    return Status::Corruption(subject, "the .npy header's CRC-32 differs");
  LOCKSTEP_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(bytes, subject));
  if (h.data_offset != e->head || h.data_bytes != data.size()) {
    return Status::Corruption(
        subject, StrCat("the .npy header says ", PackNum(h.data_bytes),
                        " data bytes after ", PackNum(h.data_offset),
                        "; the index says ", PackNum(data.size()), " after ",
                        PackNum(e->head)));
  }
  StatusOr<Tensor> t = ReadNpyFromBuffer(bytes, subject, owner_);
  LOCKSTEP_RETURN_IF_ERROR(CheckIntact());
  LOCKSTEP_RETURN_IF_ERROR(t.status());
  bool in_place = t->nbytes() > 0 &&
                  reinterpret_cast<const char*>(t->data()) == data.data();
  if (in_place && map_ != nullptr && data.size() >= kPackDeferCrcFromBytes) {
    return t->WithFileRegion(path(), e->offset + e->head)
        .WithUnverifiedCrc32(e->data_crc);
  }
  uint32_t crc = Crc32(data);
  LOCKSTEP_RETURN_IF_ERROR(CheckIntact());
  if (crc != e->data_crc) {
    return Status::Corruption(
        subject, StrCat("the data's CRC-32 is ", internal::Hex(crc),
                        ", the index records ", internal::Hex(e->data_crc)));
  }
  if (!in_place || map_ == nullptr) return t;
  return t->WithFileRegion(path(), e->offset + e->head);
}

}  // namespace lockstep
