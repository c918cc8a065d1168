#include "lockstep/compare/packed_cells.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "lockstep/core/check.h"

namespace lockstep {

PackedCells::PackedCells(std::initializer_list<std::string_view> cells) {
  PackedCellsBuilder b;
  for (std::string_view c : cells) b.Add(c);
  *this = b.Finish();
}

PackedCells::PackedCells(const std::vector<std::string>& cells) {
  PackedCellsBuilder b;
  for (const std::string& c : cells) b.Add(c);
  *this = b.Finish();
}

size_t PackedCells::bytes() const {
  size_t n = size();
  if (n == 0) return 0;
  size_t width = Wide() ? sizeof(uint32_t) : sizeof(uint16_t);
  return sizeof(uint32_t) + n * width + End(n - 1);
}

PackedCells::PackedCells(const PackedCells& other) { *this = other; }

PackedCells& PackedCells::operator=(const PackedCells& other) {
  if (this == &other) return *this;
  size_t bytes = other.bytes();
  if (bytes == 0) {
    buf_.reset();
    return *this;
  }
  buf_.reset(new unsigned char[bytes]);
  std::memcpy(buf_.get(), other.buf_.get(), bytes);
  return *this;
}

void PackedCells::Set(size_t i, std::string_view value) {
  LOCKSTEP_CHECK(i < size());
  PackedCellsBuilder b;
  for (size_t k = 0; k < size(); ++k) b.Add(k == i ? value : (*this)[k]);
  *this = b.Finish();
}

void PackedCells::Resize(size_t n) {
  PackedCellsBuilder b;
  for (size_t k = 0; k < n; ++k) b.Add(k < size() ? (*this)[k] : "");
  *this = b.Finish();
}

std::vector<std::string> PackedCells::ToVector() const {
  std::vector<std::string> out;
  out.reserve(size());
  for (std::string_view c : *this) out.emplace_back(c);
  return out;
}

bool operator==(const PackedCells& a, const PackedCells& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

namespace {

// The length of the longest prefix of `text` of at most `max` bytes that
// ends at a UTF-8 character boundary.
size_t Utf8Prefix(std::string_view text, size_t max) {
  if (text.size() <= max) return text.size();
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

}  // namespace

std::string CutCellMark(uint64_t bytes) {
  return "...(cut from " + std::to_string(bytes) + " bytes)";
}

std::string CutCellText(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::string mark = CutCellMark(text.size());
  std::string out(text.substr(0, Utf8Prefix(text, max_bytes - mark.size())));
  return out + mark;
}

PackedCellsBuilder& PackedCellsBuilder::AppendPastCap(std::string_view part) {
  size_t have = chars_.size() - OpenBegin();
  size_t room = have < kMaxCellBytes ? kMaxCellBytes - have : 0;
  // Keep one byte past the cap, so that Close sees the cell must be cut.
  size_t keep = std::min(part.size(), room + 1);
  chars_.append(part.substr(0, keep));
  dropped_ += part.size() - keep;
  return *this;
}

void PackedCellsBuilder::CutOpenCell(size_t begin) {
  std::string_view text(chars_.data() + begin, chars_.size() - begin);
  std::string mark = CutCellMark(text.size() + dropped_);
  chars_.resize(begin + Utf8Prefix(text, kMaxCellBytes - mark.size()));
  chars_ += mark;
  dropped_ = 0;
}

PackedCellsBuilder& PackedCellsBuilder::Close() {
  size_t begin = OpenBegin();
  if (chars_.size() - begin > kMaxCellBytes || dropped_ > 0) CutOpenCell(begin);
  // Cells are capped, and rows have a few dozen: 2 GiB of text, which 31-bit
  // offsets cannot address, would be a bug upstream.
  LOCKSTEP_CHECK(chars_.size() < PackedCells::kRepeatWide);
  size_t n = chars_.size() - begin;
  if (n > 0 && !ends_.empty() && n == last_end_ - last_begin_ &&
      std::memcmp(chars_.data() + begin, chars_.data() + last_begin_, n) == 0) {
    chars_.resize(begin);
    ends_.push_back(static_cast<uint32_t>(begin) | PackedCells::kRepeatWide);
    return *this;
  }
  last_begin_ = begin;
  last_end_ = chars_.size();
  ends_.push_back(static_cast<uint32_t>(chars_.size()));
  return *this;
}

PackedCells PackedCellsBuilder::Finish() {
  PackedCells out;
  size_t n = ends_.size();
  if (n > 0) {
    LOCKSTEP_CHECK(n <= PackedCells::kCountMask);
    bool wide = chars_.size() >= PackedCells::kRepeatNarrow;
    size_t width = wide ? sizeof(uint32_t) : sizeof(uint16_t);
    size_t head = sizeof(uint32_t) + n * width;
    out.buf_.reset(new unsigned char[head + chars_.size()]);
    unsigned char* p = out.buf_.get();
    uint32_t word0 = static_cast<uint32_t>(n) | (wide ? PackedCells::kWide : 0);
    std::memcpy(p, &word0, sizeof(word0));
    p += sizeof(word0);
    if (wide) {
      std::memcpy(p, ends_.data(), n * sizeof(uint32_t));
    } else {
      for (size_t i = 0; i < n; ++i) {
        uint32_t end = ends_[i] & ~PackedCells::kRepeatWide;
        bool repeat = (ends_[i] & PackedCells::kRepeatWide) != 0;
        uint16_t e = static_cast<uint16_t>(
            end | (repeat ? PackedCells::kRepeatNarrow : 0));
        std::memcpy(p + i * sizeof(e), &e, sizeof(e));
      }
    }
    std::memcpy(out.buf_.get() + head, chars_.data(), chars_.size());
  }
  chars_.clear();
  ends_.clear();
  last_begin_ = last_end_ = 0;
  return out;
}

}  // namespace lockstep
