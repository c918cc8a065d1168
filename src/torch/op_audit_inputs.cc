// The input sweeps of the audit: exhaustive for 16-bit element-wise ops,
// sampled plus special points for fp32, random rows for softmax.
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>

#include "lockstep/numerics/half.h"
#include "lockstep/numerics/ulp.h"
#include "torch/op_audit_internal.h"

namespace lockstep::audit {
namespace {

// Points every fp32 sweep holds, each with its two neighbours on each side:
// zeros, subnormals, the normal range's ends, small integers, powers of two
// and ten up to the huge, and k * pi / m (zeros and poles of the trig
// functions, and the arguments schedules feed them).
std::vector<double> SpecialPoints() {
  std::vector<double> p = {
      0, FLT_TRUE_MIN, 0x1p-140, FLT_MIN - FLT_TRUE_MIN, FLT_MIN, 0.5, 1, 2,
      3, 10,           FLT_MAX};
  for (int e = -120; e <= 127; e += 11) p.push_back(std::ldexp(1.0, e));
  for (double d : {1e-30, 1e-10, 1e-5, 1e5, 1e10, 1e20, 1e30, 1e38}) {
    p.push_back(d);
  }
  for (int m : {1, 2, 3, 4, 6, 8}) {
    for (int k = 1; k <= 32; ++k) p.push_back(k * kPi / m);
  }
  for (int e = 10; e <= 120; e += 10) p.push_back(std::ldexp(kPi, e));
  size_t n = p.size();
  for (size_t i = 0; i < n; ++i) p.push_back(-p[i]);
  return p;
}

// Appends x (rounded to fp32) and its neighbours +-1, +-2 ulp.
void AddWithNeighbours(double x, std::vector<double>* out) {
  double f = RoundToFormat(x, DType::kFloat32);
  for (int64_t k = -2; k <= 2; ++k) {
    double v = StepUlps(f, k, DType::kFloat32);
    if (std::isfinite(v)) out->push_back(v);
  }
}

// Uniform over the fp32 bit patterns (ordered values) in [lo, hi].
double UniformBits(double lo, double hi, std::mt19937_64& rng) {
  int64_t a = UlpDistance(0.0, lo, DType::kFloat32) * (lo < 0 ? -1 : 1);
  int64_t b = UlpDistance(0.0, hi, DType::kFloat32) * (hi < 0 ? -1 : 1);
  std::uniform_int_distribution<int64_t> d(a, b);
  return StepUlps(0.0, d(rng), DType::kFloat32);
}

std::vector<double> Float32Inputs(const OpSpec& op, size_t samples,
                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(op.core_lo, op.core_hi);
  std::vector<double> v;
  v.reserve(samples + 2000);
  double lo = RoundToFormat(op.core_lo, DType::kFloat32);
  double hi = RoundToFormat(op.core_hi, DType::kFloat32);
  for (size_t i = 0; i < samples; ++i) {
    if (i % 4 == 0) {
      v.push_back(UniformBits(-FLT_MAX, FLT_MAX, rng));
    } else if (i % 4 == 1) {
      v.push_back(UniformBits(lo, hi, rng));
    } else {
      v.push_back(RoundToFormat(value(rng), DType::kFloat32));
    }
  }
  for (double x : SpecialPoints()) AddWithNeighbours(x, &v);
  for (double x : op.extra) AddWithNeighbours(x, &v);
  for (double x : {kInf, -kInf, std::nan(""), -0.0}) v.push_back(x);
  return v;
}

std::vector<double> AllPatterns(DType dtype) {
  std::vector<double> v(65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    uint16_t b = static_cast<uint16_t>(i);
    v[i] = dtype == DType::kFloat16 ? HalfToFloat(b) : BFloat16ToFloat(b);
  }
  return v;
}

// Rows of kSoftmaxRow values: logits of scale 1, 5 and 20, rows shifted by a
// large offset (max subtraction matters), and rows with one dominant logit.
std::vector<double> SoftmaxInputs(DType dtype, size_t samples, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  size_t rows = std::max<size_t>(samples / kSoftmaxRow, 8);
  std::vector<double> v;
  v.reserve(rows * kSoftmaxRow);
  for (size_t r = 0; r < rows; ++r) {
    double scale = r % 4 == 0 ? 1.0 : r % 4 == 1 ? 5.0 : 20.0;
    double offset = r % 4 == 3 ? 1000.0 : 0.0;
    for (int64_t j = 0; j < kSoftmaxRow; ++j) {
      double x = normal(rng) * scale + offset + (j == 0 && r % 8 == 2 ? 30 : 0);
      v.push_back(RoundToFormat(x, dtype));
    }
  }
  return v;
}

}  // namespace

std::vector<double> SweepInputs(const OpSpec& op, DType dtype, size_t samples,
                                uint64_t seed) {
  if (IsSoftmax(op)) return SoftmaxInputs(dtype, samples, seed);
  if (dtype == DType::kFloat32) return Float32Inputs(op, samples, seed);
  return AllPatterns(dtype);
}

}  // namespace lockstep::audit
