#include "format/zip_writer.h"

#include <algorithm>

#include "format/zip_records.h"
#include "lockstep/core/check.h"

namespace lockstep::internal {
namespace {

using namespace zip;  // NOLINT: the record constants (zip_records.h)

constexpr uint32_t kDescriptorSig = 0x08074b50;
constexpr size_t kEndRecordsSize =
    kZip64EocdSize + kZip64LocatorSize + kEocdSize;
constexpr uint16_t kUtf8 = 0x0800;            // UTF-8 names
constexpr uint16_t kDataDescriptor = 0x0008;  // CRC, sizes after the data
constexpr uint16_t kPaddingId = 0x4246;       // "FB", as torch names it
constexpr uint16_t kMadeBy = 0x031e;          // torch's ZIP64 end record values
constexpr uint16_t kNeeded = 0x002d;

// v's bytes, least significant first; zeros past its eighth (a run of zero
// fields is written as one call: a shift by 64 or more is undefined).
void Le(std::string* s, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    s->push_back(i < 8 ? static_cast<char>(v >> (8 * i)) : '\0');
  }
}

uint64_t Clamp32(uint64_t v, bool replaced) { return replaced ? kMax32 : v; }

// torch's writer (miniz) writes an empty record's zeros in its local header
// and no data descriptor.
uint16_t FlagsFor(uint64_t size) {
  return size == 0 ? kUtf8 : kUtf8 | kDataDescriptor;
}

}  // namespace

size_t TorchZipWriter::Zip64::FieldBytes() const {
  if (!sizes && !offset) return 0;
  return 4 + (sizes ? 16 : 0) + (offset ? 8 : 0);
}

TorchZipWriter::Zip64 TorchZipWriter::Zip64For(uint64_t size,
                                               uint64_t offset) const {
  return Zip64{size >= zip64_from_, offset >= zip64_from_};
}

size_t TorchZipWriter::MaxOverhead(std::string_view name) {
  size_t local = kLocalSize + name.size() + 28 + 4 + kZipDataAlignment + 24;
  size_t central = kCentralSize + name.size() + 28;
  return local + central + kEndRecordsSize;
}

// The 'Z' bytes that put the data at a multiple of kZipDataAlignment: the
// data follows the local header, the name, the ZIP64 field and the 4-byte
// head of the padding field itself.
size_t TorchZipWriter::PaddingFor(uint64_t offset, size_t name_size,
                                  Zip64 z) const {
  uint64_t start = offset + kLocalSize + name_size + z.FieldBytes() + 4;
  return (kZipDataAlignment - start % kZipDataAlignment) % kZipDataAlignment;
}

void TorchZipWriter::AddRecord(std::string_view name, std::string_view data,
                               uint32_t crc) {
  LOCKSTEP_CHECK(name.size() < kMax16 - kZipDataAlignment);
  uint64_t offset = out_->size();
  Zip64 z = Zip64For(data.size(), offset);
  size_t pad = PaddingFor(offset, name.size(), z);
  std::string* o = out_;
  Le(o, kLocalSig, 4);
  Le(o, 0, 2);  // version needed (torch writes 0)
  Le(o, FlagsFor(data.size()), 2);
  Le(o, 0, 2 + 2 + 2);  // method STORED, time, date
  Le(o, 0, 4 + 4 + 4);  // CRC and sizes: in the data descriptor, if any
  Le(o, name.size(), 2);
  Le(o, z.FieldBytes() + 4 + pad, 2);
  o->append(name);
  if (z.FieldBytes() > 0) {
    Le(o, kZip64ExtraId, 2);
    Le(o, z.FieldBytes() - 4, 2);
    if (z.sizes) {
      Le(o, data.size(), 8);  // uncompressed
      Le(o, data.size(), 8);  // compressed
    }
    if (z.offset) Le(o, offset, 8);
  }
  Le(o, kPaddingId, 2);
  Le(o, pad, 2);
  o->append(pad, 'Z');
  LOCKSTEP_DCHECK(o->size() % kZipDataAlignment == 0);
  o->append(data);
  if (FlagsFor(data.size()) & kDataDescriptor) {
    Le(o, kDescriptorSig, 4);
    Le(o, crc, 4);
    int size_bytes = z.FieldBytes() > 0 ? 8 : 4;
    Le(o, data.size(), size_bytes);  // compressed
    Le(o, data.size(), size_bytes);  // uncompressed
  }
  AppendCentral(name, data.size(), crc, offset);
  ++records_;
}

void TorchZipWriter::AppendCentral(std::string_view name, uint64_t size,
                                   uint32_t crc, uint64_t offset) {
  Zip64 z = Zip64For(size, offset);
  std::string* c = &central_;
  Le(c, kCentralSig, 4);
  Le(c, 0, 2 + 2);  // version made by, needed (torch writes 0)
  Le(c, FlagsFor(size), 2);
  Le(c, 0, 2 + 2 + 2);  // method STORED, time, date
  Le(c, crc, 4);
  Le(c, Clamp32(size, z.sizes), 4);  // compressed
  Le(c, Clamp32(size, z.sizes), 4);  // uncompressed
  Le(c, name.size(), 2);
  Le(c, z.FieldBytes(), 2);
  Le(c, 0, 2 + 2 + 2 + 4);  // comment size, disk, internal, external attrs
  Le(c, Clamp32(offset, z.offset), 4);
  c->append(name);
  if (z.FieldBytes() > 0) {
    Le(c, kZip64ExtraId, 2);
    Le(c, z.FieldBytes() - 4, 2);
    if (z.sizes) {
      Le(c, size, 8);  // uncompressed
      Le(c, size, 8);  // compressed
    }
    if (z.offset) Le(c, offset, 8);
  }
}

void TorchZipWriter::Finish() {
  std::string* o = out_;
  uint64_t cd_offset = o->size();
  o->append(central_);
  uint64_t end64 = o->size();
  Le(o, kZip64EocdSig, 4);
  Le(o, kZip64EocdSize - 12, 8);  // size of the rest of the record
  Le(o, kMadeBy, 2);
  Le(o, kNeeded, 2);
  Le(o, 0, 4 + 4);  // this disk, the directory's disk
  Le(o, records_, 8);
  Le(o, records_, 8);
  Le(o, central_.size(), 8);
  Le(o, cd_offset, 8);
  Le(o, kZip64LocatorSig, 4);
  Le(o, 0, 4);  // the end record's disk
  Le(o, end64, 8);
  Le(o, 1, 4);  // disks
  Le(o, kEocdSig, 4);
  Le(o, 0, 2 + 2);
  Le(o, std::min<uint64_t>(records_, kMax16), 2);
  Le(o, std::min<uint64_t>(records_, kMax16), 2);
  Le(o, std::min<uint64_t>(central_.size(), kMax32), 4);
  Le(o, std::min<uint64_t>(cd_offset, kMax32), 4);
  Le(o, 0, 2);  // comment size
  central_.clear();
}

}  // namespace lockstep::internal
