// Tensor files that change or rot under compare: one that another process
// truncates while compare reads it (a run still writing its dump, a cleanup
// job), one with a flipped bit (its CRC-32 disagrees). Each becomes an error
// row naming the file; none kills the compare (SIGBUS) or passes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "format/pt_builder.h"
#include "lockstep/compare/compare_dumps.h"
#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/dump_writer.h"
#include "lockstep/format/tensor_file.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

const std::string kToy = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy";
const std::string kVictim = "Functional.linear.0.forward.input.0.pt";
const char kVictimRow[] = "Functional.linear.0.forward.input.0";

// Copies the toy dump to `dir`t and `dir`b.
void CopyToy(const std::string& dir) {
  fs::path base;
  for (const auto& e : fs::recursive_directory_iterator(kToy + "/dumpA"))
    if (e.path().filename() == "dump.json") base = e.path().parent_path();
  fs::copy(base, dir + "t", fs::copy_options::recursive);
  fs::copy(base, dir + "b", fs::copy_options::recursive);
}

// Sets the shape that `rank`/dump.json gives the victim's tensor (the first
// input of Functional.linear.0.forward) to [n], so that a file of n
// elements put in its place matches its entry.
void SetVictimShape(const std::string& rank, int64_t n) {
  StatusOr<DumpFile> d = ReadDumpJson(rank + "/dump.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  for (DumpEntry& e : d->entries) {
    if (e.name != "Functional.linear.0.forward") continue;
    auto fields = e.value.TakeFields();
    for (auto& [key, args] : fields) {
      if (key != "input_args") continue;
      std::vector<PyValue> items = args.TakeItems();
      auto input = items[0].TakeFields();
      for (auto& [k, v] : input)
        if (k == "shape") v = PyValue::List({PyValue::Int(n)});
      items[0] = PyValue::Dict(std::move(input));
      args = PyValue::List(std::move(items));
    }
    e.value = PyValue::Dict(std::move(fields));
  }
  ASSERT_TRUE(WriteDumpJson(rank + "/dump.json", *d).ok());
}

// Expects the victim's row to be an error whose text holds `why`, every
// other row to pass, and the compare to count an error.
void ExpectVictimFails(const CompareResult& r, const std::string& why) {
  int victims = 0;
  for (const CompareRow& row : r.rows) {
    if (row.npu_name() != kVictimRow) {
      EXPECT_EQ(row.verdict, Verdict::kPass) << row.npu_name();
      continue;
    }
    ++victims;
    EXPECT_EQ(row.verdict, Verdict::kError);
    std::string all;
    for (const std::string& m : row.messages) all += m + "\n";
    for (std::string_view c : row.cells) all += std::string(c) + "\n";
    EXPECT_NE(all.find(why), std::string::npos) << all;
  }
  EXPECT_EQ(victims, 1);
  EXPECT_GT(r.summary.error, 0);
}

TEST(TensorFileFaultsTest, FileTruncatedWhileComparedIsAnErrorRow) {
  if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
  std::string dir = testing::FreshTestDir("lockstep_truncated_");
  CopyToy(dir);
  std::string victim = dir + "t/dump_tensor_data/" + kVictim;
  CompareOptions options;
  options.jobs = 2;
  // Reads each file, then truncates the victim before its bytes are used:
  // the map now reaches past the end of the file.
  options.load_tensor = [&](const std::string& path) -> StatusOr<Tensor> {
    StatusOr<Tensor> t = ReadTensorFile(path);
    if (path == victim) EXPECT_EQ(::truncate(path.c_str(), 0), 0);
    return t;
  };
  StatusOr<CompareResult> r = CompareDumpPaths(dir + "t", dir + "b", options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectVictimFails(*r, "shrank while it was being read");
  bool warned = false;
  for (const std::string& w : r->warnings)
    warned = warned || w.find(victim) != std::string::npos;
  EXPECT_TRUE(warned);
  fs::remove_all(dir);
}

TEST(TensorFileFaultsTest, FlippedBitFailsTheCrc) {
  if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
  std::string dir = testing::FreshTestDir("lockstep_crc_");
  CopyToy(dir);
  std::string victim = dir + "t/dump_tensor_data/" + kVictim;
  StatusOr<std::string> bytes = ReadFileToString(victim);
  ASSERT_TRUE(bytes.ok());
  // One bit in the middle of the tensor's bytes, found by reading it.
  std::string b = *bytes;
  StatusOr<Tensor> t = ReadTensorFile(victim);
  ASSERT_TRUE(t.ok() && t->file_region() != nullptr);
  size_t off = t->file_region()->offset + t->nbytes() / 2;
  b[off] = static_cast<char>(b[off] ^ 0x10);
  ASSERT_TRUE(WriteFileAtomic(victim, b).ok());
  CompareOptions options;
  StatusOr<CompareResult> r = CompareDumpPaths(dir + "t", dir + "b", options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectVictimFails(*r, "CRC-32 is");
  fs::remove_all(dir);
}

// A tensor large enough to be streamed (pread in chunks) is checked on the
// chunks as they are read: intact it passes, one flipped bit fails it.
TEST(TensorFileFaultsTest, FlippedBitInAStreamedTensorFailsTheCrc) {
  if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
  for (bool flip : {false, true}) {
    std::string dir = testing::FreshTestDir("lockstep_crc_big_");
    CopyToy(dir);
    const int n = 3 * 256 * 1024 + 77;  // elements: 3 chunks and a tail
    std::string pt =
        testing::BuildPt("x", testing::TensorPickle({.numel = n, .shape = {n}}),
                         testing::FloatBytes(n));
    for (const char* side : {"t", "b"}) {
      SetVictimShape(dir + side, n);
      std::string path = dir + side + "/dump_tensor_data/" + kVictim;
      ASSERT_TRUE(fs::remove(path));
      std::string bytes = pt;
      if (flip && side[0] == 't') {
        size_t off = bytes.find(testing::FloatBytes(4)) + 4 * (n - 5);
        bytes[off] = static_cast<char>(bytes[off] ^ 0x01);
      }
      ASSERT_TRUE(WriteFileAtomic(path, bytes).ok());
    }
    CompareOptions options;
    options.jobs = 2;
    StatusOr<CompareResult> r = CompareDumpPaths(dir + "t", dir + "b", options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (flip) {
      ExpectVictimFails(*r, "CRC-32");
    } else {
      for (const CompareRow& row : r->rows)
        EXPECT_EQ(row.verdict, Verdict::kPass) << row.npu_name();
    }
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace lockstep
