#include "lockstep/compare/packed_cells.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace lockstep {
namespace {

TEST(PackedCellsTest, KeepsEveryCellExactly) {
  std::vector<std::string> want = {"Functional.linear.0.forward.input.0",
                                   "",
                                   "N/A",
                                   std::string("a\0b", 3),
                                   "0.5",
                                   std::string(kMaxCellBytes, 'x'),
                                   std::string(30000, 'y'),
                                   ""};
  PackedCells c(want);
  ASSERT_EQ(c.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(c[i], want[i]) << i;
  EXPECT_EQ(c.ToVector(), want);
  size_t i = 0;
  for (std::string_view cell : c) EXPECT_EQ(cell, want[i++]);
  EXPECT_EQ(i, want.size());
}

TEST(PackedCellsTest, EmptyCopiesAndEdits) {
  PackedCells none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.bytes(), 0u);
  EXPECT_EQ(none.begin(), none.end());
  PackedCells a = {"x", "yy", "zzz"};
  PackedCells b = a;  // a deep copy
  b.Set(1, "changed");
  EXPECT_EQ(a[1], "yy");
  EXPECT_EQ(b[1], "changed");
  EXPECT_EQ(b[2], "zzz");
  EXPECT_NE(a, b);
  b.Set(1, "yy");
  EXPECT_EQ(a, b);
  b.Resize(2);
  EXPECT_EQ(b.ToVector(), (std::vector<std::string>{"x", "yy"}));
  b.Resize(4);
  EXPECT_EQ(b.ToVector(), (std::vector<std::string>{"x", "yy", "", ""}));
  PackedCells moved = std::move(b);
  EXPECT_EQ(moved.size(), 4u);
  a = a;  // self-assignment keeps it
  EXPECT_EQ(a[2], "zzz");
  a = none;
  EXPECT_TRUE(a.empty());
}

TEST(PackedCellsTest, OneAllocationOfCountOffsetsAndCharacters) {
  PackedCells c = {"ab", "cde"};
  EXPECT_EQ(c.bytes(), sizeof(uint32_t) + 2 * sizeof(uint16_t) + 5);
}

// Offsets are 16-bit (15 bits and a repeat mark) up to 32,767 characters a
// row and 32-bit beyond: every cell reads back exactly on both sides of the
// switch.
TEST(PackedCellsTest, RowsOver32KiBOfTextUseWideOffsets) {
  for (size_t total : {size_t{32767}, size_t{32768}, size_t{200000}}) {
    // "first", cells of at most 20,000 x's and y's in turn, "last!".
    std::vector<std::string> want = {"first"};
    for (size_t left = total - 10; left > 0;) {
      size_t n = std::min<size_t>(left, 20000);
      want.push_back(std::string(n, want.size() % 2 ? 'x' : 'y'));
      left -= n;
    }
    want.push_back("last!");
    PackedCells c(want);
    ASSERT_EQ(c.ToVector(), want) << total;
    size_t width = total > 32767 ? sizeof(uint32_t) : sizeof(uint16_t);
    EXPECT_EQ(c.bytes(), sizeof(uint32_t) + want.size() * width + total)
        << total;
    PackedCells copy = c;
    EXPECT_EQ(copy[want.size() - 1], "last!");
    copy.Resize(3);
    copy.Set(1, "short");
    copy.Set(2, "last!");
    EXPECT_EQ(copy.ToVector(),
              (std::vector<std::string>{"first", "short", "last!"}));
    EXPECT_EQ(copy.bytes(), sizeof(uint32_t) + 3 * sizeof(uint16_t) + 15);
  }
}

// Issue 32: a dump.json string of 1 GiB reached a cell whole, and 2 GiB of
// a row's text aborted on an internal check. A cell keeps kMaxCellBytes at
// most, with a mark that says it was cut and how long it was.
TEST(PackedCellsTest, CellOfAGigabyteIsCutWithAMark) {
  std::string big(size_t{1} << 30, 'a');
  PackedCellsBuilder b;
  b.Add("name");
  for (int i = 0; i < 8; ++i) b.Add(big);  // Max, Min, Mean, Norm, two sides
  b.Append("\xc3\xa9");  // an "é" across the cut, written in parts
  b.Append(std::string(kMaxCellBytes, 'b')).Close();
  std::string* open = b.chars();  // formatted in place, past the cap
  open->append(kMaxCellBytes + 5, 'c');
  b.Close();
  PackedCells c = b.Finish();
  ASSERT_EQ(c.size(), 11u);
  EXPECT_EQ(c[0], "name");
  std::string mark = CutCellMark(size_t{1} << 30);
  EXPECT_EQ(mark, "...(cut from 1073741824 bytes)");
  for (size_t i = 1; i <= 8; ++i) {
    EXPECT_EQ(c[i].size(), kMaxCellBytes) << i;
    EXPECT_TRUE(c[i].ends_with(mark)) << i;
  }
  EXPECT_LT(c.bytes(), 12 * kMaxCellBytes);
  EXPECT_TRUE(
      c[9].starts_with("\xc3\xa9"
                       "bbb"));
  EXPECT_TRUE(c[9].ends_with(CutCellMark(kMaxCellBytes + 2)))
      << c[9].substr(31900);
  EXPECT_TRUE(c[10].ends_with(CutCellMark(kMaxCellBytes + 5)));
  // A cut never splits a character.
  std::string accents;
  for (int i = 0; i < 20000; ++i) accents += "\xc3\xa9";
  std::string cut = CutCellText(accents, 1000);
  EXPECT_LE(cut.size(), 1000u);
  size_t kept = cut.size() - CutCellMark(40000).size();
  EXPECT_EQ(kept % 2, 0u);
  EXPECT_EQ(CutCellText("short", 1000), "short");
}

// A cell equal to the one before it costs its offset only, however long the
// run of repeats; a run ends at the first different cell.
TEST(PackedCellsTest, RepeatedCellsAreKeptOnce) {
  std::string name = "Functional.linear.0.forward.input.0";
  std::vector<std::string> want = {
      name, name, name, "torch.float32", "torch.float32", "", "", "x", name};
  for (size_t total : {size_t{0}, size_t{40000}}) {  // narrow, then wide
    std::vector<std::string> w = want;
    w.push_back(std::string(total / 2, 'z'));  // two cells: 40,000 is past
    w.push_back(std::string(total / 2, 'y'));  // a cell's cap
    w.push_back(std::string(total / 2, 'y'));
    PackedCells c(w);
    ASSERT_EQ(c.ToVector(), w) << total;
    size_t text = 2 * name.size() + 13 + 1 + total;  // z's and one y run
    size_t width = total > 0 ? sizeof(uint32_t) : sizeof(uint16_t);
    EXPECT_EQ(c.bytes(), sizeof(uint32_t) + w.size() * width + text) << total;
    PackedCells copy = c;
    copy.Set(1, "other");  // no longer a repeat; cell 2 now repeats nothing
    w[1] = "other";
    EXPECT_EQ(copy.ToVector(), w) << total;
  }
}

// The builder, reused across rows as compare does, against a vector of
// strings built alongside.
TEST(PackedCellsTest, ReusedBuilderMatchesAVectorOfStrings) {
  std::mt19937 rng(5);
  PackedCellsBuilder b;
  for (int row = 0; row < 500; ++row) {
    std::vector<std::string> want;
    size_t n = rng() % 40;
    for (size_t i = 0; i < n; ++i) {
      // Often the cell before it again (kept as a repeat mark), or empty.
      std::string cell(rng() % 4, 'a' + static_cast<char>(rng() % 2));
      if (rng() % 2) {  // written in two parts
        size_t half = cell.size() / 2;
        b.Append(cell.substr(0, half)).Append(cell.substr(half)).Close();
      } else {
        b.Add(cell);
      }
      want.push_back(cell);
    }
    EXPECT_EQ(b.cells(), n);
    PackedCells c = b.Finish();
    ASSERT_EQ(c.ToVector(), want) << row;
    EXPECT_EQ(b.cells(), 0u);
  }
}

}  // namespace
}  // namespace lockstep
