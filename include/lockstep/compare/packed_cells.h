// A compare row's cells (msprobe's CSV columns) packed into one allocation:
// a count, each cell's end offset (16-bit for a row's usual few hundred
// characters) and the characters, instead of a vector
// of strings (about 30 cells a row; a row's cells were most of a statistics
// compare's memory). A cell equal to the one before it (the Bench Name,
// Dtype and Shape of a matched row) is kept as a mark, not as its text.
// Cells are read as string_views.
//
//   PackedCells c = {"Functional.linear.0.forward.input.0", "N/A", "0.5"};
//   c[0]   // "Functional.linear.0.forward.input.0"
//   for (std::string_view cell : c) ...
//
//   PackedCellsBuilder b;  // reusable: one builder for many rows
//   b.Add("a");
//   b.Append("1");         // appends to the cell being written
//   b.Append("2");
//   b.Close();             // ends it: "12"
//   PackedCells row = b.Finish();
//
// Changing a cell (Set, Resize) repacks the row: for tests and rare edits.
//
// A cell holds at most kMaxCellBytes: longer text (a hostile dump.json's
// string of megabytes, copied into four statistics cells of each side) is
// cut at a UTF-8 character boundary and ends with a mark that says so and
// how long it was: "aaaa...(cut from 1048576 bytes)". A row therefore never
// approaches the 2 GiB its offsets can address.
// Thread safety: as a std::string.
#ifndef LOCKSTEP_COMPARE_PACKED_CELLS_H_
#define LOCKSTEP_COMPARE_PACKED_CELLS_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

class PackedCells {
 public:
  PackedCells() = default;
  PackedCells(std::initializer_list<std::string_view> cells);
  explicit PackedCells(const std::vector<std::string>& cells);
  PackedCells(const PackedCells& other);
  PackedCells& operator=(const PackedCells& other);
  PackedCells(PackedCells&&) noexcept = default;
  PackedCells& operator=(PackedCells&&) noexcept = default;

  size_t size() const { return buf_ ? Word0() & kCountMask : 0; }
  bool empty() const { return size() == 0; }
  // REQUIRES: i < size().
  const std::string_view operator[](size_t i) const {  // const: no "c[i] = x"
    while (i > 0 && Repeats(i)) --i;  // the text of the cell it repeats
    size_t begin = i == 0 ? 0 : End(i - 1);
    return std::string_view(Chars() + begin, End(i) - begin);
  }
  // Characters and offsets held (the heap block's size).
  size_t bytes() const;

  // Replaces cell i. REQUIRES: i < size().
  void Set(size_t i, std::string_view value);
  // Keeps the first n cells, or adds empty ones up to n.
  void Resize(size_t n);
  std::vector<std::string> ToVector() const;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = std::string_view;
    const_iterator(const PackedCells* c, size_t i) : c_(c), i_(i) {}
    std::string_view operator*() const { return (*c_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const PackedCells* c_;
    size_t i_;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, size()); }

 private:
  friend class PackedCellsBuilder;
  // buf_: a 32-bit word holding the count n (and kWide), then an entry for
  // each cell, 16-bit (32-bit when kWide: a row of 32 KiB of text or more),
  // then the characters. An entry is the cell's end offset, its top bit
  // (kRepeat) set when the cell repeats the one before it and adds no
  // characters. Read with memcpy (no aliasing).
  static constexpr uint32_t kWide = 0x80000000u;
  static constexpr uint32_t kCountMask = 0x7fffffffu;
  static constexpr uint32_t kRepeatNarrow = 0x8000u;
  static constexpr uint32_t kRepeatWide = 0x80000000u;
  uint32_t Word0() const {
    uint32_t w;
    std::memcpy(&w, buf_.get(), sizeof(w));
    return w;
  }
  bool Wide() const { return (Word0() & kWide) != 0; }
  uint32_t Entry(size_t i) const {
    const unsigned char* p = buf_.get() + sizeof(uint32_t);
    if (Wide()) {
      uint32_t e;
      std::memcpy(&e, p + i * sizeof(uint32_t), sizeof(e));
      return e;
    }
    uint16_t e;
    std::memcpy(&e, p + i * sizeof(uint16_t), sizeof(e));
    return e;
  }
  bool Repeats(size_t i) const {
    return (Entry(i) & (Wide() ? kRepeatWide : kRepeatNarrow)) != 0;
  }
  size_t End(size_t i) const {
    return Entry(i) & (Wide() ? ~kRepeatWide : ~kRepeatNarrow);
  }
  const char* Chars() const {
    size_t width = Wide() ? sizeof(uint32_t) : sizeof(uint16_t);
    return reinterpret_cast<const char*>(buf_.get()) + sizeof(uint32_t) +
           size() * width;
  }
  std::unique_ptr<unsigned char[]> buf_;
};

bool operator==(const PackedCells& a, const PackedCells& b);
inline bool operator!=(const PackedCells& a, const PackedCells& b) {
  return !(a == b);
}

// The most bytes of text a cell holds, its cut mark included (Excel's
// limit for a cell is 32,767 characters).
inline constexpr size_t kMaxCellBytes = 32000;

// The mark that ends a cell cut from `bytes` bytes: "...(cut from N bytes)".
std::string CutCellMark(uint64_t bytes);

// `text` cut to at most `max_bytes` bytes with CutCellMark, as a cell is
// (unchanged when it fits). REQUIRES: max_bytes >= 64.
std::string CutCellText(std::string_view text, size_t max_bytes);

class PackedCellsBuilder {
 public:
  // A whole cell.
  PackedCellsBuilder& Add(std::string_view cell) {
    Append(cell);
    return Close();
  }
  // Appends to the open cell; Close ends it. Past kMaxCellBytes, the part is
  // only counted (the cell will be cut).
  PackedCellsBuilder& Append(std::string_view part) {
    if (chars_.size() - OpenBegin() + part.size() > kMaxCellBytes)
      return AppendPastCap(part);
    chars_.append(part);
    return *this;
  }
  PackedCellsBuilder& Close();
  // The open cell's text so far, for writers that format in place (a cell
  // made longer than kMaxCellBytes here is cut when it is closed).
  std::string* chars() { return &chars_; }
  size_t cells() const { return ends_.size(); }
  // The packed row; the builder is empty again (keeping its capacity).
  // REQUIRES: no cell is open.
  PackedCells Finish();

 private:
  size_t OpenBegin() const {
    return ends_.empty() ? 0 : ends_.back() & ~PackedCells::kRepeatWide;
  }
  PackedCellsBuilder& AppendPastCap(std::string_view part);
  // Cuts the open cell, starting at `begin`, to kMaxCellBytes with its mark.
  void CutOpenCell(size_t begin);

  std::string chars_;
  std::vector<uint32_t> ends_;  // PackedCells' entries, kRepeatWide marks
  size_t last_begin_ = 0, last_end_ = 0;  // the last cell's text
  uint64_t dropped_ = 0;  // bytes appended to the open cell and not kept
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_PACKED_CELLS_H_
