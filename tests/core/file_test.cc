#include "lockstep/core/file.h"

#include <gtest/gtest.h>
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

TEST(FileTest, DirectWriteTruncatesAndLeavesOneFile) {
  std::string dir = TempDir() + "_direct";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/t.npy";
  ASSERT_TRUE(WriteFileDirect(path, std::string(5000, 'a')).ok());
  ASSERT_TRUE(WriteFileDirect(path, "bb").ok());  // shorter: truncated
  auto s = ReadFileToString(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "bb");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
