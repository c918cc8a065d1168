// Streaming pair metrics (chunks read through a map) against the in-memory
// kernel, and what they keep resident.
#include "lockstep/compare/stream_metrics.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "lockstep/format/npy.h"
#include "lockstep/format/tensor_file.h"
#include "testing/proc_status.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

Tensor Random(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d;
  std::string bytes(static_cast<size_t>(n) * 4, '\0');
  float* p = reinterpret_cast<float*>(bytes.data());
  for (int64_t i = 0; i < n; ++i) p[i] = d(rng);
  if (n > 10) p[7] = 0.0f;  // exercises the b == 0 path
  Tensor t = Tensor::FromBytes(DType::kFloat32, {n}, std::move(bytes));
  return t;
}

class StreamMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("lockstep_stream_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(StreamMetricsTest, MatchesInMemoryKernel) {
  const int64_t n = 3 * kStreamChunkElements + 12345;  // a ragged last chunk
  ASSERT_TRUE(WriteNpy((dir_ / "a.npy").string(), Random(n, 1)).ok());
  ASSERT_TRUE(WriteNpy((dir_ / "b.npy").string(), Random(n, 2)).ok());
  auto a = ReadTensorFile((dir_ / "a.npy").string());
  auto b = ReadTensorFile((dir_ / "b.npy").string());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_NE(a->file_region(), nullptr);
  ASSERT_NE(b->file_region(), nullptr);
  PairMetrics mem = ComputePairMetrics(*a, *b, 1);
  for (int threads : {1, 2, 3}) {
    auto s = StreamPairMetrics(*a, *b, threads);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    EXPECT_EQ(s->n, mem.n);
    EXPECT_EQ(s->rel_lt_1e3, mem.rel_lt_1e3);
    EXPECT_EQ(s->rel_lt_5e3, mem.rel_lt_5e3);
    EXPECT_EQ(s->max_abs_diff, mem.max_abs_diff);
    EXPECT_EQ(s->max_rel_err, mem.max_rel_err);
    // Sums differ only by the order of additions: n·eps relative at most.
    const double tol = 1e-16 * static_cast<double>(n);
    EXPECT_NEAR(s->dot, mem.dot, tol * std::fabs(mem.dot));
    EXPECT_NEAR(s->sum_d2, mem.sum_d2, tol * mem.sum_d2);
    EXPECT_NEAR(s->sum_a2, mem.sum_a2, tol * mem.sum_a2);
    if (threads > 1) {  // independent of the thread count
      auto one = StreamPairMetrics(*a, *b, 1);
      EXPECT_EQ(s->dot, one->dot);
      EXPECT_EQ(s->sum_d2, one->sum_d2);
    }
  }
}

TEST_F(StreamMetricsTest, FileTruncatedAfterOpeningIsAnError) {
  const int64_t n = kStreamChunkElements + 5;
  ASSERT_TRUE(WriteNpy((dir_ / "a.npy").string(), Random(n, 1)).ok());
  ASSERT_TRUE(WriteNpy((dir_ / "b.npy").string(), Random(n, 2)).ok());
  auto a = ReadTensorFile((dir_ / "a.npy").string());
  auto b = ReadTensorFile((dir_ / "b.npy").string());
  ASSERT_TRUE(a.ok() && b.ok());
  // Replace b.npy by a shorter file of the same name (a new inode, so the
  // mapping held by `b` is untouched).
  fs::remove(dir_ / "b.npy");
  ASSERT_TRUE(WriteNpy((dir_ / "b.npy").string(), Random(10, 3)).ok());
  auto s = StreamPairMetrics(*a, *b, 2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("b.npy"), std::string::npos)
      << s.status().message();
}

// The pages read are dropped from the map as the threads go: a pair of
// 96 MiB tensors (192 MiB from the page cache) raises the peak resident
// size by far less than the tensors' size. Bound: per thread and side, the
// 8 MiB release step, a 2 MiB block and a chunk, about 2 x 2 x 11 MiB.
TEST_F(StreamMetricsTest, ReadPagesLeaveTheMap) {
  const int64_t n = 24 << 20;  // 96 MiB of float32 a side
  ASSERT_TRUE(WriteNpy((dir_ / "a.npy").string(), Random(n, 1)).ok());
  ASSERT_TRUE(WriteNpy((dir_ / "b.npy").string(), Random(n, 2)).ok());
  auto a = ReadTensorFile((dir_ / "a.npy").string());
  auto b = ReadTensorFile((dir_ / "b.npy").string());
  ASSERT_TRUE(a.ok() && b.ok());
  if (!testing::ResetPeakRss()) GTEST_SKIP() << "no /proc/self/clear_refs";
  const double before = testing::ProcStatusMiB("VmRSS:");
  auto s = StreamPairMetrics(*a, *b, 2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->n, n);
  const double added = testing::ProcStatusMiB("VmHWM:") - before;
  EXPECT_LT(added, 64.0) << "MiB kept resident of 192 read";
}

}  // namespace
}  // namespace lockstep
