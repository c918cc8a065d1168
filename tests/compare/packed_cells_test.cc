#include "lockstep/compare/packed_cells.h"

#include <gtest/gtest.h>

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
                                   std::string(70000, 'x'),
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
    std::vector<std::string> want = {"first", std::string(total - 10, 'x'),
                                     "last!"};
    PackedCells c(want);
    ASSERT_EQ(c.ToVector(), want) << total;
    size_t width = total > 32767 ? sizeof(uint32_t) : sizeof(uint16_t);
    EXPECT_EQ(c.bytes(), sizeof(uint32_t) + 3 * width + total) << total;
    PackedCells copy = c;
    EXPECT_EQ(copy[2], "last!");
    copy.Set(1, "short");
    EXPECT_EQ(copy.ToVector(),
              (std::vector<std::string>{"first", "short", "last!"}));
    EXPECT_EQ(copy.bytes(), sizeof(uint32_t) + 3 * sizeof(uint16_t) + 15);
  }
}

// A cell equal to the one before it costs its offset only, however long the
// run of repeats; a run ends at the first different cell.
TEST(PackedCellsTest, RepeatedCellsAreKeptOnce) {
  std::string name = "Functional.linear.0.forward.input.0";
  std::vector<std::string> want = {
      name, name, name, "torch.float32", "torch.float32", "", "", "x", name};
  for (size_t total : {size_t{0}, size_t{40000}}) {  // narrow, then wide
    std::vector<std::string> w = want;
    w.push_back(std::string(total, 'y'));
    w.push_back(std::string(total, 'y'));
    PackedCells c(w);
    ASSERT_EQ(c.ToVector(), w) << total;
    size_t text = 2 * name.size() + 13 + 1 + total;
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
