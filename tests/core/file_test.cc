#include "lockstep/core/file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>

namespace lockstep {
namespace {

std::string TempDir() {
  auto p = std::filesystem::temp_directory_path() /
           ("lockstep_file_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(p);
  return p.string();
}

TEST(FileTest, AtomicWriteThenMapAndRead) {
  std::string dir = TempDir();
  std::string path = dir + "/a.bin";
  std::string data(100000, 'x');
  data[5] = '\0';
  ASSERT_TRUE(WriteFileAtomic(path, data).ok());
  auto m = MappedFile::Open(path);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->view(), data);
  auto s = ReadFileToString(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, data);
  // No temporary left behind.
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(dir);
}

TEST(FileTest, EmptyFileMapsToEmptyView) {
  std::string dir = TempDir();
  ASSERT_TRUE(WriteFileAtomic(dir + "/e", "").ok());
  auto m = MappedFile::Open(dir + "/e");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->size(), 0u);
  std::filesystem::remove_all(dir);
}

TEST(FileTest, MissingFileIsNotFoundAndNamesThePath) {
  auto m = MappedFile::Open("/nonexistent/lockstep/x.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("/nonexistent/lockstep/x.json"),
            std::string::npos);
}

TEST(FileTest, DirectoryIsRejected) {
  auto m = MappedFile::Open("/tmp");
  EXPECT_FALSE(m.ok());
}

TEST(FileTest, UnwritableTargetFailsCleanly) {
  Status s = WriteFileAtomic("/nonexistent/dir/out.json", "x");
  EXPECT_FALSE(s.ok());
  Status d = WriteFileDirect("/nonexistent/dir/out.npy", "x");
  EXPECT_FALSE(d.ok());
  EXPECT_NE(d.message().find("/nonexistent/dir/out.npy"), std::string::npos)
      << d.message();
}

TEST(FileTest, DirectWriteCreatesAndNeverReplaces) {
  std::string dir = TempDir() + "_direct";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/t.npy";
  ASSERT_TRUE(WriteFileDirect(path, std::string(5000, 'a')).ok());
  Status again = WriteFileDirect(path, "bb");
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("the name is taken"), std::string::npos)
      << again.message();
  auto s = ReadFileToString(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, std::string(5000, 'a'));  // the first file, whole
  std::filesystem::remove_all(dir);
}

// A directory with a file outside the output and symbolic links to it
// planted where a writer might write.
class PlantedLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempDir() + "_planted";
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/out");
    outside_ = dir_ + "/outside.txt";
    ASSERT_TRUE(WriteFileAtomic(outside_, "precious").ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Plant(const std::string& at) {
    std::filesystem::create_symlink(outside_, at);
  }
  std::string Outside() { return *ReadFileToString(outside_); }
  std::string dir_, outside_;
};

TEST_F(PlantedLinkTest, AtomicWriteNeverWritesThroughTemporaryNames) {
  // The temporary names of earlier versions (path.tmp.<pid>), planted.
  std::string path = dir_ + "/out/summary.json";
  Plant(path + ".tmp." + std::to_string(::getpid()));
  ASSERT_TRUE(WriteFileAtomic(path, "new").ok());
  EXPECT_EQ(Outside(), "precious");
  EXPECT_EQ(*ReadFileToString(path), "new");
}

TEST_F(PlantedLinkTest, AtomicWriteReplacesALinkAtThePathWithoutFollowing) {
  std::string path = dir_ + "/out/report.html";
  Plant(path);
  ASSERT_TRUE(WriteFileAtomic(path, "new").ok());
  EXPECT_EQ(Outside(), "precious");
  EXPECT_FALSE(std::filesystem::is_symlink(path));
  EXPECT_EQ(*ReadFileToString(path), "new");
}

TEST_F(PlantedLinkTest, DirectWriteRefusesALinkAtThePath) {
  std::string path = dir_ + "/out/x.npy";
  Plant(path);
  EXPECT_FALSE(WriteFileDirect(path, "new").ok());
  EXPECT_EQ(Outside(), "precious");
  EXPECT_TRUE(std::filesystem::is_symlink(path));  // left as it was
}

TEST_F(PlantedLinkTest, RemoveRemovesALinkNotItsTarget) {
  std::string path = dir_ + "/out/report_table.js";
  Plant(path);
  ASSERT_TRUE(RemoveFileIfPresent(path).ok());
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(path)));
  EXPECT_EQ(Outside(), "precious");
  EXPECT_TRUE(RemoveFileIfPresent(path).ok());  // nothing there: fine
  Status dir = RemoveFileIfPresent(dir_ + "/out");
  EXPECT_EQ(dir.code(), StatusCode::kIoError);
  EXPECT_NE(dir.message().find(dir_ + "/out"), std::string::npos);
  EXPECT_TRUE(IsDirectory(dir_ + "/out"));
}

// The CSV of a large compare is written as rendered, chunk by chunk.
TEST_F(PlantedLinkTest, WriteIfAbsentFromASourceWritesEveryChunk) {
  std::string path = dir_ + "/out/chunked.csv";
  int calls = 0;
  std::string want;
  ChunkSource source = [&](std::string* chunk) {
    EXPECT_TRUE(chunk->empty());
    *chunk = "chunk " + std::to_string(calls) + "\n";
    want += *chunk;
    return ++calls < 5;
  };
  auto written = WriteFileIfAbsentFrom(path, source);
  ASSERT_TRUE(written.ok() && *written);
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(*ReadFileToString(path), want);
  // A taken name: the new text is written aside, then dropped.
  calls = 0;
  want.clear();
  auto again = WriteFileIfAbsentFrom(path, source);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(*ReadFileToString(path),
            "chunk 0\nchunk 1\nchunk 2\nchunk 3\nchunk 4\n");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_ + "/out"))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // no temporary file left
}

TEST_F(PlantedLinkTest, WriteIfAbsentNeverReplaces) {
  std::string path = dir_ + "/out/compare_result.csv";
  auto first = WriteFileIfAbsent(path, "one");
  ASSERT_TRUE(first.ok() && *first);
  auto second = WriteFileIfAbsent(path, "two");
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  EXPECT_EQ(*ReadFileToString(path), "one");
  std::string link = dir_ + "/out/linked.csv";
  Plant(link);
  auto linked = WriteFileIfAbsent(link, "three");
  ASSERT_TRUE(linked.ok());
  EXPECT_FALSE(*linked);
  EXPECT_EQ(Outside(), "precious");
  // No temporary file is left behind.
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_ + "/out"))
    files += e.is_regular_file() && !e.is_symlink();
  EXPECT_EQ(files, 1);
}

// A file truncated by another process while mapped: the next access past the
// new end would raise SIGBUS; it reads zeros instead and the map says so.
TEST(FileTest, TruncatedWhileMappedReadsZerosAndIsMarked) {
  std::string dir = TempDir();
  std::string path = dir + "/shrinks.bin";
  std::string data(3 << 20, 'x');
  ASSERT_TRUE(WriteFileAtomic(path, data).ok());
  auto m = MappedFile::Open(path, /*populate=*/false);
  ASSERT_TRUE(m.ok());
  const std::byte* p = (*m)->data();
  EXPECT_EQ(static_cast<char>(p[10]), 'x');
  EXPECT_TRUE((*m)->CheckIntact().ok());
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  EXPECT_EQ(static_cast<char>(p[100]), 'x');  // still inside the file
  size_t zeros = 0;
  for (size_t i = 4096; i < data.size(); i += 4096)
    zeros += p[i] == std::byte{0};
  EXPECT_EQ(zeros, data.size() / 4096 - 1);
  Status s = (*m)->CheckIntact();
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("shrank while it was being read"),
            std::string::npos);
  EXPECT_NE(s.message().find(path), std::string::npos);
  EXPECT_TRUE(MappedFile::RangeFaulted(p + 8192, 16));
  // Another, intact map is not blamed.
  ASSERT_TRUE(WriteFileAtomic(dir + "/other.bin", data).ok());
  auto other = MappedFile::Open(dir + "/other.bin", false);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(static_cast<char>((*other)->data()[5 << 19]), 'x');
  EXPECT_TRUE((*other)->CheckIntact().ok());
  EXPECT_FALSE(MappedFile::RangeFaulted((*other)->data(), (*other)->size()));
  std::filesystem::remove_all(dir);
}

// A SIGBUS that is not ours still kills the process (the default action).
TEST(FileDeathTest, ForeignSigbusStillKills) {
  std::string dir = TempDir();
  ASSERT_TRUE(WriteFileAtomic(dir + "/x", "abc").ok());
  ASSERT_TRUE(MappedFile::Open(dir + "/x").ok());  // handler installed
  // Killed by SIGBUS, or ended by a sanitizer's handler we chained to
  // (ASan exits 1): never carried on as if nothing happened.
  EXPECT_DEATH(::raise(SIGBUS), "");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
