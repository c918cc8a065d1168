// Fuzzes the tensor pack reader (format/tensor_pack.h): no input may crash
// it or read out of bounds; an index it accepts has every entry aligned,
// inside the entry area and disjoint from the others, with unique valid
// names; every tensor it reads lies inside its entry (every byte is read)
// and matches the CRC-32 the index records for it.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz_check.h"
#include "lockstep/format/crc32.h"
#include "lockstep/format/tensor_pack.h"

namespace {

using lockstep::fuzz::Checksum;
using lockstep::fuzz::Require;

void CheckEntries(const lockstep::PackReader& r) {
  std::vector<lockstep::PackEntry> sorted = r.entries();
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.offset < b.offset; });
  for (size_t i = 0; i < sorted.size(); ++i) {
    const lockstep::PackEntry& e = sorted[i];
    Require(lockstep::IsValidPackName(e.name));
    Require(e.offset >= lockstep::kPackHeaderSize && e.head <= e.size);
    Require(e.offset + e.size <= r.bytes().size());
    if (i > 0) Require(sorted[i - 1].offset + sorted[i - 1].size <= e.offset);
    Require(r.Find(e.name) != nullptr && r.Find(e.name)->offset == e.offset);
  }
}

uint64_t Le(const std::string& s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(s[at + i]);
  return v;
}

void PutLe(std::string* s, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) (*s)[at + i] = static_cast<char>(v >> (8 * i));
}

// The input with its CRC-32s made right where its index can be walked, so
// that mutations reach the checks behind them (bounds, overlaps, names,
// .npy headers) instead of stopping at a checksum.
std::string Repair(std::string s) {
  using lockstep::kPackFooterSize;
  using lockstep::kPackRecordSize;
  if (s.size() < lockstep::kPackHeaderSize + kPackFooterSize) return s;
  size_t foot = s.size() - kPackFooterSize;
  uint64_t at = Le(s, foot, 8), len = Le(s, foot + 8, 8);
  if (at > foot || len > foot - at) return s;
  for (uint64_t r = at; r + kPackRecordSize <= at + len;) {
    uint64_t off = Le(s, r, 8), size = Le(s, r + 8, 8), head = Le(s, r + 16, 4);
    if (off <= s.size() && size <= s.size() - off && head <= size) {
      std::string_view e = std::string_view(s).substr(off, size);
      PutLe(&s, r + 20, lockstep::Crc32(e.substr(0, head)), 4);
      PutLe(&s, r + 24, lockstep::Crc32(e.substr(head)), 4);
    }
    r += kPackRecordSize + Le(s, r + 28, 4);
  }
  PutLe(&s, foot + 20, lockstep::Crc32(std::string_view(s).substr(at, len)), 4);
  return s;
}

void ReadAll(std::shared_ptr<const std::string> bytes) {
  auto parsed = lockstep::ParsePackIndex(*bytes, "fuzz.pack");
  auto r = lockstep::PackReader::FromBytes(bytes, "fuzz.pack");
  Require(parsed.ok() == r.ok());
  if (!r.ok()) return;
  CheckEntries(**r);
  for (const lockstep::PackEntry& e : (*r)->entries()) {
    auto t = (*r)->Read(e.name);
    if (!t.ok()) continue;
    Checksum(*t);  // every byte of the tensor is readable
    std::string_view stored = lockstep::PackEntryData(*bytes, e);
    Require(lockstep::Crc32(stored) == e.data_crc);
    const char* p = reinterpret_cast<const char*>(t->data());
    if (t->nbytes() > 0 && p >= bytes->data() &&
        p < bytes->data() + bytes->size()) {
      // Viewed in place: exactly the entry's data bytes.
      Require(p == stored.data() && t->nbytes() == stored.size());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A heap copy of exactly `size` bytes, so that ASan sees any overread.
  auto bytes = std::make_shared<const std::string>(
      reinterpret_cast<const char*>(data), size);
  ReadAll(bytes);
  ReadAll(std::make_shared<const std::string>(Repair(*bytes)));
  return 0;
}
