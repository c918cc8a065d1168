// GradScaler's unscale-and-check pass (grad_scaler_kernel.h) on every
// kernel path, against a plain loop: the products bit for bit and the
// inf/NaN answer, for finite, inf, NaN and overflowing values, every length
// up to 70 and a misaligned start.
#include "torch/grad_scaler_kernel.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "testing/cpu_levels.h"

namespace lockstep {
namespace {

template <typename T>
std::vector<T> Values(size_t n, std::mt19937_64* rng) {
  std::uniform_real_distribution<T> d(-4, 4);
  std::vector<T> v(n);
  for (T& x : v) x = d(*rng);
  return v;
}

template <typename T>
void Check(T inv, const char* what) {
  SCOPED_TRACE(what);
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const T big = std::numeric_limits<T>::max() / 2;
  const T specials[] = {std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN(), big, -big};
  std::mt19937_64 rng(7);
  testing::ForEachCpuLevel([&](CpuLevel) {
    for (size_t n = 0; n <= 70; ++n) {
      // -1: all finite; else one special at position `at`.
      for (int at = -1; at<static_cast<int>(n); at += n> 8 ? 7 : 1) {
        for (T special : specials) {
          std::vector<T> buf = Values<T>(n + 1, &rng);
          T* p = buf.data() + 1;  // not aligned to the vector width
          if (at >= 0) p[at] = special;
          std::vector<T> want(p, p + n);
          bool any = false;
          for (T& x : want) {
            x *= inv;
            any = any || !std::isfinite(x);
          }
          ASSERT_EQ(internal::UnscaleAndCheck(p, n, inv), any)
              << "n=" << n << " at=" << at;
          for (size_t i = 0; i < n; ++i) {
            ASSERT_EQ(std::bit_cast<U>(p[i]), std::bit_cast<U>(want[i]))
                << "n=" << n << " i=" << i;
          }
          if (at < 0) break;  // the all-finite case once per length
        }
      }
    }
  });
}

TEST(GradScalerKernelTest, FloatOnEveryPathMatchesAPlainLoop) {
  Check<float>(0.25f, "inv 0.25");
  Check<float>(4.0f, "inv 4 (big overflows)");
}

TEST(GradScalerKernelTest, DoubleOnEveryPathMatchesAPlainLoop) {
  Check<double>(0.25, "inv 0.25");
  Check<double>(4.0, "inv 4 (big overflows)");
}

TEST(GradScalerKernelTest, AnyNonFiniteOnEveryPath) {
  testing::ForEachCpuLevel([&](CpuLevel) {
    for (size_t n = 1; n <= 40; ++n) {
      std::vector<float> v(n + 1, 1.5f);
      EXPECT_FALSE(internal::AnyNonFinite(v.data() + 1, n));
      v[n] = std::numeric_limits<float>::quiet_NaN();
      EXPECT_TRUE(internal::AnyNonFinite(v.data() + 1, n)) << n;
      v[n] = -std::numeric_limits<float>::infinity();
      EXPECT_TRUE(internal::AnyNonFinite(v.data() + 1, n)) << n;
    }
  });
}

}  // namespace
}  // namespace lockstep
