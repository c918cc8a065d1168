#include "lockstep/format/background_writer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "lockstep/core/file.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/pt_writer.h"
#include "testing/same_bytes.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::SameBytes;

// A float32 tensor of `n` elements, element i = seed + i.
Tensor Floats(int64_t n, float seed) {
  std::string bytes(static_cast<size_t>(n) * 4, '\0');
  for (int64_t i = 0; i < n; ++i) {
    float v = seed + static_cast<float>(i);
    std::memcpy(&bytes[static_cast<size_t>(i) * 4], &v, 4);
  }
  return Tensor::FromBytes(DType::kFloat32, {n}, std::move(bytes));
}

class BackgroundWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lockstep_bgw_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  std::string Path(const std::string& name) const {
    return (dir_ / name).string();
  }
  std::string Slurp(const std::string& path) const {
    StatusOr<std::string> s = ReadFileToString(path);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? *s : "";
  }

  fs::path dir_;
};

TEST_F(BackgroundWriterTest, FilesEqualNumpySaveBytes) {
  std::vector<Tensor> tensors = {
      Floats(5, 1.5f),
      Tensor::FromBytes(DType::kInt64, {2, 2}, std::string(32, '\x07')),
      Tensor::FromBytes(DType::kBool, {3}, std::string("\x01\x00\x01", 3)),
      Tensor::FromBytes(DType::kBFloat16, {}, std::string("\x20\x40", 2)),
      Tensor::FromBytes(DType::kFloat16, {0, 4}, ""),
  };
  BackgroundWriter w;
  for (size_t i = 0; i < tensors.size(); ++i) {
    w.Enqueue(Path("t" + std::to_string(i) + ".npy"), tensors[i]);
  }
  ASSERT_TRUE(w.Drain().ok());
  EXPECT_EQ(w.files_written(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_TRUE(SameBytes(Slurp(Path("t" + std::to_string(i) + ".npy")),
                          EncodeNpy(tensors[i])))
        << "tensor " << i;
  }
}

// A ".pt" path gets torch.save bytes, anything else numpy.save bytes.
TEST_F(BackgroundWriterTest, ExtensionPicksTheFormat) {
  Tensor t = Floats(6, 0.25f);
  {
    BackgroundWriter w;
    w.Enqueue(Path("a.pt"), t);
    w.Enqueue(Path("a.npy"), t);
    w.Enqueue(Path("u.pt"), Tensor::FromBytes(DType::kUInt16, {1}, "zz"));
    std::vector<BackgroundWriter::Failure> failed;
    EXPECT_FALSE(w.Drain(&failed).ok());  // no .pt for uint16
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].path, Path("u.pt"));
  }
  EXPECT_TRUE(SameBytes(Slurp(Path("a.pt")), *EncodePt(t, "a")));
  EXPECT_TRUE(SameBytes(Slurp(Path("a.npy")), EncodeNpy(t)));
  EXPECT_FALSE(fs::exists(Path("u.pt")));
}

TEST_F(BackgroundWriterTest, TaskRunsAfterEveryFileQueuedBeforeIt) {
  BackgroundWriter w(size_t{256} << 20, /*threads=*/4);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> paths;
    for (int i = 0; i < 30; ++i) {
      paths.push_back(
          Path("r" + std::to_string(round) + "_" + std::to_string(i) + ".npy"));
      w.Enqueue(paths.back(), Floats(4096, i));
    }
    std::string expected = EncodeNpy(Floats(4096, 29));
    w.EnqueueTask("check", [this, paths, expected] {
      for (const std::string& p : paths) {
        if (!fs::exists(p)) return Status::Internal(p, "not written yet");
      }
      if (Slurp(paths.back()) != expected) {
        return Status::Internal(paths.back(), "incomplete");
      }
      return Status::Ok();
    });
  }
  std::vector<BackgroundWriter::Failure> failed;
  Status st = w.Drain(&failed);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(w.files_written(), 600u);  // tasks are not counted as files
}

TEST_F(BackgroundWriterTest, FailedTaskIsListedAsATask) {
  BackgroundWriter w;
  w.EnqueueTask("step3/rank0/dump.json",
                [] { return Status::IoError("dump.json", "disk full"); });
  std::vector<BackgroundWriter::Failure> failed;
  EXPECT_EQ(w.Drain(&failed).code(), StatusCode::kIoError);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_TRUE(failed[0].task);
  EXPECT_EQ(failed[0].path, "step3/rank0/dump.json");
  EXPECT_EQ(failed[0].reason, "dump.json: disk full");
}

TEST_F(BackgroundWriterTest, OneThreadWritesInEnqueueOrderAndNeverReplaces) {
  // Every job writes the same path: a writer never replaces a file, so the
  // first job run wins and each later one fails, in enqueue order.
  BackgroundWriter w(size_t{256} << 20, /*threads=*/1);
  for (int i = 0; i < 200; ++i) {
    w.Enqueue(Path("same.npy"), Floats(64, i));
    if (i == 100) w.Enqueue(Path("mid.npy"), Floats(64, i));
  }
  std::vector<BackgroundWriter::Failure> failed;
  EXPECT_FALSE(w.Drain(&failed).ok());
  EXPECT_EQ(w.files_written(), 2u);
  EXPECT_TRUE(SameBytes(Slurp(Path("same.npy")), EncodeNpy(Floats(64, 0))));
  EXPECT_TRUE(SameBytes(Slurp(Path("mid.npy")), EncodeNpy(Floats(64, 100))));
  ASSERT_FALSE(failed.empty());
  EXPECT_NE(failed[0].reason.find("the name is taken"), std::string::npos)
      << failed[0].reason;
}

TEST_F(BackgroundWriterTest, BoundSmallerThanOneTensorStillProgresses) {
  BackgroundWriter w(/*max_queued_bytes=*/16);
  for (int i = 0; i < 20; ++i) {
    w.Enqueue(Path("big" + std::to_string(i) + ".npy"), Floats(4096, i));
  }
  ASSERT_TRUE(w.Drain().ok());
  EXPECT_EQ(w.files_written(), 20u);
  EXPECT_TRUE(SameBytes(Slurp(Path("big19.npy")), EncodeNpy(Floats(4096, 19))));
}

TEST_F(BackgroundWriterTest, MissingDirIsReportedAtDrainWithTheCount) {
  BackgroundWriter w;
  std::string missing = Path("no/such/dir/x.npy");
  w.Enqueue(missing, Floats(3, 0));
  w.Enqueue(Path("ok.npy"), Floats(3, 0));
  w.Enqueue(Path("no/such/dir/y.npy"), Floats(3, 0));
  w.Enqueue(Path("no/such/dir/z.npy"), Floats(3, 0));
  Status st = w.Drain();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(missing), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("3 tensor files failed"), std::string::npos)
      << st.message();
  EXPECT_EQ(w.files_written(), 1u);
  EXPECT_TRUE(fs::exists(Path("ok.npy")));
  // The errors were reported once; the next batch starts clean.
  EXPECT_TRUE(w.Drain().ok());
  w.Enqueue(Path("ok2.npy"), Floats(3, 0));
  EXPECT_TRUE(w.Drain().ok());
  EXPECT_EQ(w.files_written(), 2u);
}

TEST_F(BackgroundWriterTest, DrainListsTheFilesNotWrittenAndWhy) {
  BackgroundWriter w;
  w.Enqueue(Path("gone/a.npy"), Floats(3, 0));
  w.Enqueue(Path("ok.npy"), Floats(3, 0));
  w.Enqueue(Path("gone/b.npy"), Floats(3, 0));
  std::vector<BackgroundWriter::Failure> failed;
  EXPECT_FALSE(w.Drain(&failed).ok());
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[0].path, Path("gone/a.npy"));
  EXPECT_EQ(failed[1].path, Path("gone/b.npy"));
  EXPECT_NE(failed[0].reason.find("No such file or directory"),
            std::string::npos)
      << failed[0].reason;
  // Listed once: the next batch starts clean.
  EXPECT_TRUE(w.Drain(&failed).ok());
  EXPECT_TRUE(failed.empty());
  // Many failures: the first kMaxFailuresKept are listed, all are counted.
  size_t n = BackgroundWriter::kMaxFailuresKept + 5;
  for (size_t i = 0; i < n; ++i) {
    w.Enqueue(Path("gone/" + std::to_string(i) + ".npy"), Floats(1, 0));
  }
  Status st = w.Drain(&failed);
  EXPECT_EQ(failed.size(), BackgroundWriter::kMaxFailuresKept);
  EXPECT_NE(st.message().find(std::to_string(n) + " tensor files"),
            std::string::npos)
      << st.message();
}

TEST_F(BackgroundWriterTest, OneFailureIsReportedWithoutACount) {
  BackgroundWriter w;
  w.Enqueue(Path("gone/x.npy"), Floats(3, 0));
  Status st = w.Drain();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().find("tensor files failed"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("gone/x.npy"), std::string::npos);
}

TEST_F(BackgroundWriterTest, UnwritableDirIsReportedAtDrain) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only dirs";
  fs::path ro = dir_ / "ro";
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  BackgroundWriter w;
  w.Enqueue((ro / "x.npy").string(), Floats(3, 0));
  Status st = w.Drain();
  fs::permissions(ro, fs::perms::owner_all);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("x.npy"), std::string::npos) << st.message();
  EXPECT_EQ(w.files_written(), 0u);
}

TEST_F(BackgroundWriterTest, DestructorWritesWhatIsQueued) {
  {
    BackgroundWriter w(/*max_queued_bytes=*/1 << 20);
    for (int i = 0; i < 50; ++i) {
      w.Enqueue(Path("q" + std::to_string(i) + ".npy"), Floats(1000, i));
    }
  }
  for (int i = 0; i < 50; ++i) {
    std::string p = Path("q" + std::to_string(i) + ".npy");
    ASSERT_TRUE(fs::exists(p)) << p;
    EXPECT_TRUE(SameBytes(Slurp(p), EncodeNpy(Floats(1000, i)))) << p;
  }
}

TEST_F(BackgroundWriterTest, ConcurrentProducersAllLand) {
  BackgroundWriter w(/*max_queued_bytes=*/4096);
  std::vector<std::thread> producers;
  for (int t = 0; t < 3; ++t) {
    producers.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i) {
        w.Enqueue(
            Path("p" + std::to_string(t) + "_" + std::to_string(i) + ".npy"),
            Floats(256, t * 100 + i));
      }
    });
  }
  for (std::thread& p : producers) p.join();
  ASSERT_TRUE(w.Drain().ok());
  EXPECT_EQ(w.files_written(), 90u);
  EXPECT_TRUE(SameBytes(Slurp(Path("p2_29.npy")), EncodeNpy(Floats(256, 229))));
}

}  // namespace
// A failed task (a dump.json) is not counted as a tensor file.
TEST_F(BackgroundWriterTest, FailedTasksAreNotCountedAsTensorFiles) {
  BackgroundWriter w;
  w.Enqueue(Path("gone/x.npy"), Floats(3, 0));
  w.EnqueueTask("step0/rank0/dump.json",
                [] { return Status::IoError("dump.json", "disk full"); });
  Status st = w.Drain();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("1 tensor files and 1 other write failed"),
            std::string::npos)
      << st.message();
}

}  // namespace lockstep
