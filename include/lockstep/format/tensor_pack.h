// The packed tensor container: one file per rank dir of a step,
// `dump_tensor_data.pack`, holding the tensors that msprobe's layout keeps
// as one .npy file each under dump_tensor_data/. dump.json is unchanged: a
// tensor's "data_name" is the key of its entry in the pack. Written by the
// probe with ProbeConfig::tensor_format = kPack (tensor files cost a file
// creation each, ~1 ms on ext4); `lockstep export` turns it back into
// msprobe's layout. docs/packed_format.md describes it for other readers.
//
// Layout (all integers little-endian):
//
//   header   64 bytes at 0: magic "\x89LSPACK\n", u32 version (1),
//            u32 alignment (a power of two, 64 .. 1 MiB), 48 bytes zero
//   entries  each entry is the exact bytes of the .npy file msprobe's layout
//            would hold, starting at a multiple of `alignment` (the .npy
//            header is padded to 64 bytes, so the data is 64-byte aligned
//            in the file and in a map of it); zero bytes between entries
//   index    at index_offset (a multiple of 8), one record per entry:
//              u64 offset, u64 size      the entry's bytes
//              u32 head                  .npy header bytes (data follows)
//              u32 head_crc, u32 data_crc  CRC-32 of the header, the data
//              u32 name_size, name bytes the data_name (no '/', no NUL)
//   footer   32 bytes at the end: u64 index_offset, u64 index_size,
//            u32 entry_count, u32 index_crc (CRC-32 of the index),
//            magic "LSPKEND\n"
//
// The index and footer are written last, when the pack is finished: a pack
// whose writer did not finish (crash, kill, full disk) has no footer and is
// refused, never read in part. The footer must end the file exactly, so a
// truncated or extended pack is refused too.
//
// Thread safety: PackReader is immutable after Open and may be read from
// many threads at once.
#ifndef LOCKSTEP_FORMAT_TENSOR_PACK_H_
#define LOCKSTEP_FORMAT_TENSOR_PACK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/core/status.h"
#include "lockstep/format/tensor.h"

namespace lockstep {

inline constexpr std::string_view kPackFileName = "dump_tensor_data.pack";
inline constexpr std::string_view kPackMagic = "\x89LSPACK\n";
inline constexpr std::string_view kPackEndMagic = "LSPKEND\n";
inline constexpr uint32_t kPackVersion = 1;
inline constexpr size_t kPackHeaderSize = 64;
inline constexpr size_t kPackFooterSize = 32;
inline constexpr size_t kPackRecordSize = 32;   // an index record's fixed part
inline constexpr uint32_t kPackAlignment = 64;  // what PackWriter uses
inline constexpr uint32_t kPackMaxAlignment = uint32_t{1} << 20;
inline constexpr size_t kPackMaxNameSize = 4096;

// One entry of the index.
struct PackEntry {
  std::string name;     // the data_name
  uint64_t offset = 0;  // of the .npy bytes in the file
  uint64_t size = 0;    // .npy header + data
  uint32_t head = 0;    // .npy header bytes
  uint32_t head_crc = 0;
  uint32_t data_crc = 0;
};

// Whether `name` may name a pack entry: 1 to kPackMaxNameSize bytes, not
// "." or "..", no '/' and no NUL (so that export makes it a file name).
bool IsValidPackName(std::string_view name);

// Parses and checks a whole pack's header, footer and index (not the
// entries' bytes): magic, version, alignment, footer position and CRC, every
// record inside the index, every entry aligned, inside the entry area and
// overlapping no other, names valid and unique. Entries are returned in
// index order. `subject` names the file in messages.
// Errors: Corruption saying what is wrong ("no index: ..." for a pack whose
// writer did not finish); NotSupported for another version.
StatusOr<std::vector<PackEntry>> ParsePackIndex(std::string_view file,
                                                std::string_view subject);

// The file's bytes that hold `e`'s tensor data (after its .npy header).
// REQUIRES: `e` came from ParsePackIndex of `file`.
std::string_view PackEntryData(std::string_view file, const PackEntry& e);

// Reads tensors out of a pack through a memory map.
class PackReader {
 public:
  // Maps `path` (a regular file, not through a symbolic link) and checks its
  // index (ParsePackIndex). Errors name the file.
  static StatusOr<std::shared_ptr<const PackReader>> Open(
      const std::string& path);
  // The same over a pack held in memory (tests, fuzzing): tensors view
  // `*bytes` and record no file region. `subject` names it in messages.
  static StatusOr<std::shared_ptr<const PackReader>> FromBytes(
      std::shared_ptr<const std::string> bytes, std::string subject);

  const std::string& path() const { return path_; }
  const std::vector<PackEntry>& entries() const { return entries_; }
  const PackEntry* Find(std::string_view name) const;
  std::string_view bytes() const { return bytes_; }

  // The tensor of entry `name`, a zero-copy view of the map that records its
  // file region (so large tensors can be streamed with pread). The .npy
  // header's CRC-32 is checked; the data's too, unless the data is 1 MiB or
  // more and viewed in place: the result then carries it
  // (Tensor::unverified_crc32) for whoever reads the bytes.
  // Errors: NotFound for a name not in the pack; Corruption naming the
  // file and the entry.
  StatusOr<Tensor> Read(std::string_view name) const;

 private:
  PackReader() = default;
  static StatusOr<std::shared_ptr<const PackReader>> Make(
      std::shared_ptr<const void> owner, std::string_view bytes,
      std::string path, const MappedFile* map);
  // Ok, or the map's error when the file shrank while mapped.
  Status CheckIntact() const;

  std::shared_ptr<const void> owner_;  // keeps bytes_ alive
  std::string_view bytes_;
  std::string path_;
  const MappedFile* map_ = nullptr;  // when backed by a file
  std::vector<PackEntry> entries_;
  std::unordered_map<std::string_view, size_t> by_name_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_TENSOR_PACK_H_
