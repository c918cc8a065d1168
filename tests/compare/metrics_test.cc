#include "lockstep/compare/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compare/metrics_reference.h"
#include "compare/tensor_test_util.h"
#include "lockstep/numerics/pyfloat.h"
#include "numerics/kernel_util.h"
#include "testing/cpu_levels.h"

namespace lockstep {
namespace {

using testing::Aggregate;
using testing::ComputeReference;
using testing::Decode;
using testing::MakeTensor;
using testing::RefAgg;
using testing::RefPair;

constexpr double kEps = std::numeric_limits<double>::epsilon();
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const size_t kSizes[] = {0, 1, 7, 1000, 100003};

bool IsFloat32Lane(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
}

bool SameValue(double x, double y) {
  return (std::isnan(x) && std::isnan(y)) || x == y;
}

// Sums: |got - want| <= (k + 2) * eps * max(scale, 1), scale being the sum
// of the absolute terms (a rigorous bound for any summation order).
bool Close(double got, long double want, long double scale, size_t k) {
  if (std::isnan(static_cast<double>(want))) return std::isnan(got);
  if (std::isinf(static_cast<double>(want)))
    return got == static_cast<double>(want);
  long double tol = (k + 2) * kEps * std::max<long double>(scale, 1);
  return std::fabs(got - want) <= tol;
}

// Empty when `got` matches the reference over its first k elements.
std::string Mismatch(const PairMetrics& got, const RefPair& r, size_t k) {
  RefAgg g = Aggregate(r, k);
  std::ostringstream out;
  out.precision(17);
  if (got.n != static_cast<int64_t>(k)) out << " n=" << got.n;
  if (!SameValue(got.max_abs_diff, g.max_abs))
    out << " max_abs_diff=" << got.max_abs_diff << " want " << g.max_abs;
  if (!SameValue(got.max_rel_err, g.max_re))
    out << " max_rel_err=" << got.max_rel_err << " want " << g.max_re;
  if (got.rel_lt_1e3 != g.c1)
    out << " rel_lt_1e3=" << got.rel_lt_1e3 << " want " << g.c1;
  if (got.rel_lt_5e3 != g.c5)
    out << " rel_lt_5e3=" << got.rel_lt_5e3 << " want " << g.c5;
  if (!Close(got.dot, g.dot, g.abs_dot, k))
    out << " dot=" << got.dot << " want " << (double)g.dot;
  if (!Close(got.sum_a2, g.sum_a2, g.sum_a2, k))
    out << " sum_a2=" << got.sum_a2;
  if (!Close(got.sum_b2, g.sum_b2, g.sum_b2, k))
    out << " sum_b2=" << got.sum_b2;
  if (!Close(got.sum_d2, g.sum_d2, g.sum_d2, k))
    out << " sum_d2=" << got.sum_d2;
  return out.str();
}

// Finds the shortest failing prefix by bisection and prints the element
// that makes it fail, with neighbours. The vector kernels take 8 elements at
// a time, so the culprit may be any of the 7 before the marked one.
std::string DescribeFirstBad(const Tensor& a, const Tensor& b, const RefPair& r,
                             int threads) {
  size_t ok = 0, bad = r.a.size();
  while (bad - ok > 1) {
    size_t mid = ok + (bad - ok) / 2;
    PairMetrics m = ComputePairMetrics(a.dtype(), a.data(), b.dtype(), b.data(),
                                       mid, threads);
    (Mismatch(m, r, mid).empty() ? ok : bad) = mid;
  }
  std::ostringstream out;
  out.precision(17);
  size_t i = bad - 1;
  out << "\n  first bad index " << i << ":";
  for (size_t j = i >= 7 ? i - 7 : 0; j < std::min(r.a.size(), i + 3); ++j) {
    out << "\n    [" << j << "] a=" << r.a[j] << " b=" << r.b[j]
        << " re=" << r.re[j] << " |a-b|=" << r.abs_d[j]
        << (j == i ? "  <--" : "");
  }
  return out.str();
}

void ExpectIdentical(const PairMetrics& x, const PairMetrics& y,
                     const std::string& label) {
  EXPECT_EQ(x.n, y.n) << label;
  EXPECT_EQ(x.nonfinite_mismatch, y.nonfinite_mismatch) << label;
  EXPECT_EQ(x.rel_lt_1e3, y.rel_lt_1e3) << label;
  EXPECT_EQ(x.rel_lt_5e3, y.rel_lt_5e3) << label;
  EXPECT_TRUE(SameValue(x.max_abs_diff, y.max_abs_diff)) << label;
  EXPECT_TRUE(SameValue(x.max_rel_err, y.max_rel_err)) << label;
  for (auto f : {&PairMetrics::dot, &PairMetrics::sum_a2, &PairMetrics::sum_b2,
                 &PairMetrics::sum_d2}) {
    EXPECT_TRUE(SameValue(x.*f, y.*f)) << label;
  }
}

// Checks the kernel on (a, b) against the reference, on every kernel path
// and on 1 and 2 threads (which must agree bit for bit).
void CheckPair(const Tensor& a, const Tensor& b, const std::string& label) {
  SCOPED_TRACE(label);
  RefPair r =
      ComputeReference(Decode(a), Decode(b),
                       IsFloat32Lane(a.dtype()) && IsFloat32Lane(b.dtype()));
  testing::ForEachCpuLevel([&](CpuLevel level) {
    PairMetrics one = ComputePairMetrics(a, b, 1);
    std::string path = CpuLevelName(level);
    EXPECT_EQ(one.nonfinite_mismatch, r.mismatch) << path;
    EXPECT_EQ(one.nan_a, r.nan_a) << path;
    EXPECT_EQ(one.nan_b, r.nan_b) << path;
    EXPECT_EQ(one.inf_a, r.inf_a) << path;
    EXPECT_EQ(one.inf_b, r.inf_b) << path;
    std::string m = Mismatch(one, r, r.a.size());
    if (!m.empty())
      ADD_FAILURE() << path << ":" << m << DescribeFirstBad(a, b, r, 1);
    ExpectIdentical(one, ComputePairMetrics(a, b, 2), path + " threads 1 vs 2");
  });
}

std::string Label(DType ta, DType tb, size_t n, bool misaligned) {
  std::ostringstream s;
  s << TorchDTypeName(ta) << " vs " << TorchDTypeName(tb) << " n=" << n
    << (misaligned ? " misaligned" : "");
  return s.str();
}

// Random pairs stored as ta/tb, with values typical of `values` (default:
// ta).
void CheckRandomPair(DType ta, DType tb, uint64_t seed,
                     std::optional<DType> values = std::nullopt) {
  for (size_t n : kSizes) {
    for (bool misaligned : {false, true}) {
      std::mt19937_64 rng(seed + n);
      std::vector<double> va, vb;
      testing::MakePair(testing::RandomValues(values.value_or(ta), n, &rng),
                        &rng, &va, &vb);
      CheckPair(MakeTensor(ta, va, misaligned), MakeTensor(tb, vb, misaligned),
                Label(ta, tb, n, misaligned));
    }
  }
}

TEST(PairMetricsTest, AllDTypesAgainstReference) {
  for (DType t : testing::AllDTypes()) CheckRandomPair(t, t, 17);
}

// Small int64 values take the vector conversion, large ones the per-lane
// one (RandomValues gives int64 values up to 2^62).
TEST(PairMetricsTest, SmallInt64ValuesAgainstReference) {
  CheckRandomPair(DType::kInt64, DType::kInt64, 41, DType::kInt16);
  CheckRandomPair(DType::kInt64, DType::kFloat64, 43, DType::kInt16);
}

// int64 -> double around the vector conversion's range [-2^51, 2^51) and
// where rounding starts (2^53 + 1).
TEST(PairMetricsTest, Int64ConversionEdges) {
  const int64_t p51 = int64_t{1} << 51, p53 = int64_t{1} << 53;
  const int64_t edges[] = {p51 - 1, -p51,     p51,       -p51 - 1,
                           p53 + 1, -p53 - 3, INT64_MAX, INT64_MIN,
                           0,       1,        -1,        12345};
  std::string a, b;
  for (int rep = 0; rep < 64; ++rep) {
    for (size_t i = 0; i < std::size(edges); ++i) {
      // Rotate so that each edge meets every lane and group position.
      testing::Put(&a, edges[(i + rep) % std::size(edges)]);
      testing::Put(&b, edges[(i + 3 * rep) % std::size(edges)] / 3);
    }
  }
  int64_t n = static_cast<int64_t>(a.size() / 8);
  CheckPair(Tensor::FromBytes(DType::kInt64, {n}, a),
            Tensor::FromBytes(DType::kInt64, {n}, b), "int64 edges");
  CheckPair(Tensor::FromBytes(DType::kInt64, {n}, a),
            Tensor::FromBytes(DType::kInt64, {n}, std::string(a.size(), '\0')),
            "int64 edges vs 0");
}

TEST(PairMetricsTest, MixedPairsAgainstReference) {
  const std::pair<DType, DType> pairs[] = {
      {DType::kFloat16, DType::kFloat32},  {DType::kFloat32, DType::kFloat16},
      {DType::kBFloat16, DType::kFloat32}, {DType::kFloat16, DType::kBFloat16},
      {DType::kFloat32, DType::kFloat64},  {DType::kFloat64, DType::kFloat32},
      {DType::kFloat16, DType::kFloat64},  {DType::kBFloat16, DType::kFloat64},
      {DType::kInt64, DType::kFloat32},    {DType::kFloat32, DType::kInt32},
      {DType::kInt32, DType::kInt64},      {DType::kBool, DType::kFloat32},
      {DType::kUInt8, DType::kInt8},       {DType::kFloat64, DType::kInt64}};
  for (auto [ta, tb] : pairs) CheckRandomPair(ta, tb, 29);
}

// Places `va[i]`/`vb[i]` at a few positions: in the first vector group, in
// the middle, in the tail and in the second chunk.
void Inject(std::vector<double>* a, std::vector<double>* b, double va,
            double vb) {
  size_t n = a->size();
  for (size_t i : {size_t{0}, size_t{5}, size_t{17}, n / 2, n - 3, n - 1}) {
    (*a)[i] = va;
    (*b)[i] = vb;
  }
}

TEST(PairMetricsTest, NonFiniteMatchedAndMismatched) {
  const std::pair<DType, DType> pairs[] = {
      {DType::kFloat32, DType::kFloat32},   {DType::kFloat16, DType::kFloat16},
      {DType::kBFloat16, DType::kBFloat16}, {DType::kFloat64, DType::kFloat64},
      {DType::kFloat16, DType::kFloat32},   {DType::kFloat32, DType::kFloat64}};
  // (a, b) at the injected positions; msprobe zeroes them when both are NaN
  // or both are inf (of any signs), and reports a mismatch otherwise.
  const std::pair<double, double> cases[] = {
      {kNaN, kNaN}, {kInf, kInf}, {kInf, -kInf}, {-kInf, -kInf}, {kNaN, 1.0},
      {2.0, kNaN},  {kInf, 1.0},  {kNaN, kInf},  {0.0, -kInf}};
  for (auto [ta, tb] : pairs) {
    for (size_t n : {size_t{40}, size_t{100003}}) {
      for (auto [x, y] : cases) {
        std::mt19937_64 rng(n);
        std::vector<double> va, vb;
        testing::MakePair(testing::RandomValues(ta, n, &rng), &rng, &va, &vb);
        Inject(&va, &vb, x, y);
        std::ostringstream label;
        label << Label(ta, tb, n, true) << " a=" << x << " b=" << y;
        CheckPair(MakeTensor(ta, va, true), MakeTensor(tb, vb, true),
                  label.str());
      }
    }
  }
}

TEST(PairMetricsTest, MatchedNonFiniteCountAsZero) {
  Tensor a = MakeTensor(DType::kFloat32, {1, kNaN, kInf, 4}, false);
  Tensor b = MakeTensor(DType::kFloat32, {1, kNaN, -kInf, 2}, false);
  PairMetrics m = ComputePairMetrics(a, b, 1);
  EXPECT_FALSE(m.nonfinite_mismatch);
  EXPECT_EQ(m.nan_a, 1);
  EXPECT_EQ(m.inf_b, 1);
  EXPECT_EQ(m.dot, 1 + 8);
  EXPECT_EQ(m.sum_d2, 4);
  EXPECT_EQ(m.max_abs_diff, 2);
  EXPECT_EQ(m.max_rel_err, 1);
  EXPECT_EQ(m.rel_lt_1e3, 3);  // the zeroed positions have RE 0
}

// A fp16 value that overflows to inf against its finite fp32 original is a
// mismatch (inf on one side only).
TEST(PairMetricsTest, HalfOverflowIsNonFiniteMismatch) {
  Tensor a = MakeTensor(DType::kFloat16, {1, 1e5, 3}, false);
  Tensor b = MakeTensor(DType::kFloat32, {1, 1e5, 3}, false);
  PairMetrics m = ComputePairMetrics(a, b, 1);
  EXPECT_TRUE(m.nonfinite_mismatch);
  EXPECT_EQ(m.inf_a, 1);
  EXPECT_EQ(m.inf_b, 0);
  EXPECT_EQ(m.max_abs_diff, kInf);
}

}  // namespace
}  // namespace lockstep
