#include "lockstep/core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace lockstep {
namespace {

TEST(ParallelTest, EveryIndexOnce) {
  for (int threads : {1, 2, 4}) {
    for (size_t n : {0u, 1u, 7u, 1000u}) {
      std::vector<std::atomic<int>> hits(n);
      ParallelFor(n, threads, [&](size_t i) { hits[i]++; });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << i;
    }
  }
}

TEST(ParallelTest, RangesCoverDisjointly) {
  std::vector<std::atomic<int>> hits(1003);
  ParallelForRange(hits.size(), 10, 3, [&](size_t b, size_t e) {
    EXPECT_LE(e - b, 10u);
    for (size_t i = b; i < e; ++i) hits[i]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

}  // namespace
}  // namespace lockstep
