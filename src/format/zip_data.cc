// ZipReader::Data and CRC checks: getting an entry's bytes out, inflating
// DEFLATE entries with zlib.
#include <zlib.h>

#include <algorithm>

#include "format/bytes.h"
#include "lockstep/format/zip.h"

namespace lockstep {
namespace {

// Deflate cannot expand data by more than ~1032:1; a recorded size beyond
// that is corrupt, and checking it first keeps a forged size from making us
// allocate.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kZlibChunk = uint64_t{1} << 30;  // zlib lengths are uInt

constexpr size_t kFirstInflateBytes = size_t{16} << 20;

// Inflates raw deflate `in` into `out` (resized to the `recorded` size).
// The buffer grows as output arrives (16 MiB, then doubling): a forged
// recorded size costs memory only for what really inflates.
Status Inflate(std::string_view in, uint64_t recorded, std::string* out,
               const std::string& subject) {
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    return Status::Internal(subject, "zlib inflateInit2 failed");
  }
  out->assign(std::min<uint64_t>(recorded, kFirstInflateBytes), '\0');
  zs.next_out = reinterpret_cast<Bytef*>(out->data());  // zlib wants non-null
  size_t in_pos = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (zs.avail_in == 0 && in_pos < in.size()) {
      zs.next_in =
          reinterpret_cast<Bytef*>(const_cast<char*>(in.data())) + in_pos;
      zs.avail_in = static_cast<uInt>(std::min(kZlibChunk, in.size() - in_pos));
      in_pos += zs.avail_in;
    }
    size_t done = zs.total_out;
    if (zs.avail_out == 0 && done == out->size() && out->size() < recorded) {
      out->resize(std::min<uint64_t>(recorded, uint64_t{2} * out->size()));
    }
    if (zs.avail_out == 0 && done < out->size()) {
      zs.next_out = reinterpret_cast<Bytef*>(out->data()) + done;
      zs.avail_out =
          static_cast<uInt>(std::min(kZlibChunk, out->size() - done));
    }
    rc = inflate(&zs, Z_NO_FLUSH);
  }
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    std::string why = rc == Z_BUF_ERROR ? "data end early or inflate to more "
                                          "than the recorded size"
                                        : "bad deflate data";
    return Status::Corruption(subject, "cannot inflate: " + why);
  }
  if (produced != recorded) {
    return Status::Corruption(
        subject, "inflates to " + std::to_string(produced) +
                     " bytes, recorded " + std::to_string(recorded));
  }
  return Status::Ok();
}

}  // namespace

Status ZipReader::VerifyCrc(const ZipEntry& entry,
                            std::string_view data) const {
  if (entry.crc32 == 0 && !data.empty()) return Status::Ok();
  uint32_t actual = Crc32(data);
  if (actual == entry.crc32) return Status::Ok();
  return Status::Corruption(
      Subject(entry), "CRC-32 is " + internal::Hex(actual) + ", recorded " +
                          internal::Hex(entry.crc32));
}

StatusOr<std::string_view> ZipReader::Data(const ZipEntry& entry,
                                           std::string* scratch,
                                           uint64_t max_bytes) const {
  std::string subject = Subject(entry);
  if (entry.flags & 1) return Status::NotSupported(subject, "is encrypted");
  if (entry.uncompressed_size > max_bytes) {
    return Status::NotSupported(subject,
                                std::to_string(entry.uncompressed_size) +
                                    " bytes is more than the limit of " +
                                    std::to_string(max_bytes));
  }
  std::string_view raw =
      archive_.substr(entry.data_offset, entry.compressed_size);
  if (entry.method == kZipStored) {
    if (entry.compressed_size != entry.uncompressed_size) {
      return Status::Corruption(subject,
                                "stored entry has compressed size " +
                                    std::to_string(entry.compressed_size) +
                                    " but uncompressed size " +
                                    std::to_string(entry.uncompressed_size));
    }
    return raw;
  }
  if (entry.method != kZipDeflated) {
    return Status::NotSupported(subject, "compression method " +
                                             std::to_string(entry.method) +
                                             " (only stored and deflate)");
  }
  if (entry.uncompressed_size / kMaxDeflateRatio > entry.compressed_size) {
    return Status::Corruption(subject,
                              std::to_string(entry.compressed_size) +
                                  " deflated bytes cannot inflate to " +
                                  std::to_string(entry.uncompressed_size));
  }
  LOCKSTEP_RETURN_IF_ERROR(
      Inflate(raw, entry.uncompressed_size, scratch, subject));
  LOCKSTEP_RETURN_IF_ERROR(VerifyCrc(entry, *scratch));
  return std::string_view(*scratch);
}

}  // namespace lockstep
