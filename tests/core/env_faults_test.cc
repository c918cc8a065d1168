// The file layer on a failing disk, through FaultEnv (no root, no tmpfs):
// a full disk, short writes, a failing close, rename, link or mkdir. Each
// failure must give an error naming the file, leave what was at the path
// untouched, and leave no temporary file behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/core/env.h"
#include "lockstep/core/file.h"
#include "testing/fault_env.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::FaultEnv;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class EnvFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDir("env_faults_");
    path_ = dir_ + "out.bin";
  }
  // The names in the test directory, sorted.
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  // `status` failed, naming the path and saying `why`.
  void ExpectFailed(const Status& status, const std::string& why) const {
    EXPECT_FALSE(status.ok());
    EXPECT_TRUE(Contains(status.ToString(), path_)) << status.ToString();
    EXPECT_TRUE(Contains(status.ToString(), why)) << status.ToString();
  }

  std::string dir_, path_;
  FaultEnv env_;
};

// Text that comes in `n` chunks of `size` bytes each ('a', 'b', ...).
ChunkSource Chunks(int n, size_t size) {
  auto i = std::make_shared<int>(0);
  return [=](std::string* chunk) {
    chunk->assign(size, static_cast<char>('a' + *i % 26));
    return ++*i < n;
  };
}

std::string ChunksText(int n, size_t size) {
  std::string text;
  for (int i = 0; i < n; ++i)
    text.append(size, static_cast<char>('a' + i % 26));
  return text;
}

TEST_F(EnvFaultsTest, ScopedEnvInstallsAndRestores) {
  EXPECT_EQ(Env::Current(), Env::Default());
  {
    ScopedEnv outer(&env_);
    EXPECT_EQ(Env::Current(), &env_);
    FaultEnv inner_env;
    {
      ScopedEnv inner(&inner_env);
      EXPECT_EQ(Env::Current(), &inner_env);
    }
    EXPECT_EQ(Env::Current(), &env_);
  }
  EXPECT_EQ(Env::Current(), Env::Default());
}

TEST_F(EnvFaultsTest, FullDiskFailsAtomicWriteAndKeepsTheOldFile) {
  ASSERT_TRUE(WriteFileAtomic(path_, "old").ok());
  ScopedEnv scope(&env_);
  env_.SetFreeBytes(4096);
  ExpectFailed(WriteFileAtomic(path_, std::string(10000, 'x')),
               "No space left on device");
  EXPECT_GT(env_.failures(FaultEnv::kWrite), 0);
  EXPECT_EQ(testing::Slurp(path_), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"out.bin"});  // no temporary
  EXPECT_EQ(env_.free_bytes(), 4096u);  // the temporary's bytes came back
  // What fits is still written.
  ASSERT_TRUE(WriteFileAtomic(path_, std::string(4000, 'y')).ok());
  EXPECT_EQ(testing::Slurp(path_), std::string(4000, 'y'));
}

TEST_F(EnvFaultsTest, FullDiskLeavesNoPartialDirectFile) {
  ScopedEnv scope(&env_);
  env_.SetFreeBytes(100);
  ExpectFailed(WriteFileDirect(path_, std::string(1000, 'x')),
               "No space left on device");
  EXPECT_TRUE(Names().empty());
}

TEST_F(EnvFaultsTest, FullDiskMidStreamPublishesNothing) {
  ScopedEnv scope(&env_);
  env_.SetFreeBytes(2500);  // the third chunk does not fit
  StatusOr<bool> r = WriteFileIfAbsentFrom(path_, Chunks(5, 1000));
  ASSERT_FALSE(r.ok());
  ExpectFailed(r.status(), "No space left on device");
  EXPECT_TRUE(Names().empty());
}

TEST_F(EnvFaultsTest, ShortWritesStillWriteEveryByte) {
  ScopedEnv scope(&env_);
  env_.SetMaxWriteBytes(7);
  std::string data(100003, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31);
  ASSERT_TRUE(WriteFileAtomic(path_, data).ok());
  EXPECT_EQ(testing::Slurp(path_), data);
  ASSERT_TRUE(WriteFileDirect(dir_ + "direct", data).ok());
  EXPECT_EQ(testing::Slurp(dir_ + "direct"), data);
  StatusOr<bool> r = WriteFileIfAbsentFrom(dir_ + "chunked", Chunks(4, 1001));
  ASSERT_TRUE(r.ok() && *r) << r.status().ToString();
  EXPECT_EQ(testing::Slurp(dir_ + "chunked"), ChunksText(4, 1001));
  EXPECT_GT(env_.short_writes(), 1000);
}

// A write() that returns 0 for a non-empty buffer (no progress, no errno)
// is an error, not an endless loop.
class NoProgressEnv : public EnvWrapper {
 public:
  NoProgressEnv() : EnvWrapper(Env::Default()) {}
  ssize_t Write(int, const void*, size_t) override { return 0; }
};

TEST_F(EnvFaultsTest, AWriteThatMakesNoProgressFails) {
  NoProgressEnv env;
  ScopedEnv scope(&env);
  ExpectFailed(WriteFileAtomic(path_, "data"), "write failed");
  EXPECT_TRUE(Names().empty());
}

TEST_F(EnvFaultsTest, FailedCloseFailsTheWriteAndPublishesNothing) {
  ASSERT_TRUE(WriteFileAtomic(path_, "old").ok());
  ScopedEnv scope(&env_);
  env_.Fail(FaultEnv::kClose, EIO);
  ExpectFailed(WriteFileAtomic(path_, "new"), "close failed: Input/output");
  EXPECT_EQ(testing::Slurp(path_), "old");
  StatusOr<bool> r = WriteFileIfAbsent(dir_ + "absent", "new");
  EXPECT_FALSE(r.ok());
  Status direct = WriteFileDirect(dir_ + "direct", "new");
  EXPECT_TRUE(Contains(direct.ToString(), "close failed")) << direct.ToString();
  EXPECT_EQ(Names(), std::vector<std::string>{"out.bin"});
  EXPECT_EQ(env_.failures(FaultEnv::kClose), 3);
}

TEST_F(EnvFaultsTest, FailedRenameKeepsTheOldFile) {
  ASSERT_TRUE(WriteFileAtomic(path_, "old").ok());
  ScopedEnv scope(&env_);
  env_.Fail(FaultEnv::kRename, EIO);
  ExpectFailed(WriteFileAtomic(path_, "new"), "rename failed");
  EXPECT_EQ(testing::Slurp(path_), "old");
  EXPECT_EQ(Names(), std::vector<std::string>{"out.bin"});
}

TEST_F(EnvFaultsTest, FailedLinkPublishesNothing) {
  ScopedEnv scope(&env_);
  env_.Fail(FaultEnv::kLink, ENOSPC);
  StatusOr<bool> r = WriteFileIfAbsent(path_, "new");
  ASSERT_FALSE(r.ok());
  ExpectFailed(r.status(), "cannot publish");
  EXPECT_TRUE(Names().empty());
}

TEST_F(EnvFaultsTest, FailedMkdirNamesTheDirectory) {
  ScopedEnv scope(&env_);
  env_.Fail(FaultEnv::kMkdir, ENOSPC);
  Status s = CreateDirs(dir_ + "a/b");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.ToString(), dir_ + "a/b")) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "No space left")) << s.ToString();
  std::string root = dir_.substr(0, dir_.size() - 1);  // no trailing '/'
  s = CreateDirsUnder(root, root + "/c/d");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.ToString(), dir_ + "c")) << s.ToString();
  EXPECT_TRUE(Names().empty());
  env_.Fail(FaultEnv::kMkdir, 0);
  EXPECT_TRUE(CreateDirs(dir_ + "a/b/").ok());
  EXPECT_TRUE(CreateDirs(dir_ + "a/b").ok());  // exists: Ok
  EXPECT_TRUE(IsDirectory(dir_ + "a/b"));
}

TEST_F(EnvFaultsTest, CreateDirsRefusesAFileInTheWay) {
  ASSERT_TRUE(WriteFileAtomic(path_, "x").ok());
  Status s = CreateDirs(path_ + "/sub");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.ToString(), path_ + "/sub")) << s.ToString();
  s = CreateDirs(path_);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.ToString(), "File exists")) << s.ToString();
}

// The disk model itself: removing a file gives its bytes back, so a writer
// that makes room (as the probe does) can go on.
TEST_F(EnvFaultsTest, RemovingAFileFreesItsBytes) {
  ScopedEnv scope(&env_);
  env_.SetFreeBytes(3000);
  ASSERT_TRUE(WriteFileAtomic(path_, std::string(2000, 'x')).ok());
  EXPECT_EQ(env_.free_bytes(), 1000u);
  EXPECT_FALSE(WriteFileAtomic(dir_ + "b", std::string(2000, 'x')).ok());
  // Replaced by a smaller file: the old one's bytes come back.
  ASSERT_TRUE(WriteFileAtomic(path_, std::string(500, 'x')).ok());
  EXPECT_EQ(env_.free_bytes(), 2500u);
  ASSERT_TRUE(RemoveFileIfPresent(path_).ok());
  EXPECT_EQ(env_.free_bytes(), 3000u);
  ASSERT_TRUE(WriteFileAtomic(dir_ + "b", std::string(2000, 'x')).ok());
}

// With blocks, as on a real file system, a file takes whole blocks.
TEST_F(EnvFaultsTest, FilesTakeWholeBlocks) {
  ScopedEnv scope(&env_);
  env_.SetBlockBytes(4096);
  env_.SetFreeBytes(3 * 4096 + 100);
  ASSERT_TRUE(WriteFileAtomic(path_, "x").ok());
  EXPECT_EQ(env_.free_bytes(), 2 * 4096u + 100);
  ASSERT_TRUE(WriteFileAtomic(dir_ + "b", std::string(4097, 'x')).ok());
  EXPECT_EQ(env_.free_bytes(), 100u);
  ExpectFailed(WriteFileAtomic(path_, "y"), "No space left on device");
  ASSERT_TRUE(RemoveFileIfPresent(dir_ + "b").ok());
  EXPECT_EQ(env_.free_bytes(), 2 * 4096u + 100);
}

}  // namespace
}  // namespace lockstep
