// MPFR references of the audit, computed in parallel and cached per op,
// dtype and input set (the same sweep is never evaluated twice in a process).
#include <cstring>
#include <map>
#include <mutex>

#include "lockstep/core/check.h"
#include "lockstep/core/parallel.h"
#include "lockstep/numerics/ulp.h"
#include "torch/op_audit_internal.h"

namespace lockstep::audit {
namespace {

// y (at kWorkPrec) -> the double nearest to it, and the dtype value nearest
// to it: the double's tie in the dtype (if any) is broken by which side of
// the double y lies on, so there is no double rounding.
Reference Finish(mpfr_srcptr y, DType dtype) {
  double d = mpfr_get_d(y, MPFR_RNDN);
  int side = mpfr_nan_p(y) ? 0 : mpfr_cmp_d(y, d);
  int sticky = side > 0 ? 1 : side < 0 ? -1 : 0;
  return {d, RoundToFormat(d, dtype, sticky)};
}

Reference Elementwise(const OpSpec& op, DType dtype, double x) {
  mpfr_ptr in = Scratch(2);
  mpfr_ptr out = Scratch(3);
  mpfr_set_d(in, x, MPFR_RNDN);  // exact: x is a double
  op.reference(out, in);
  return Finish(out, dtype);
}

// softmax of one row: exp(x_i - max) / sum_j exp(x_j - max), all at
// kWorkPrec (max subtraction only keeps the exponents small).
void SoftmaxRow(const double* x, DType dtype, Reference* out) {
  double mx = x[0];
  for (int64_t j = 1; j < kSoftmaxRow; ++j) mx = std::max(mx, x[j]);
  std::vector<mpfr_t> e(kSoftmaxRow);
  mpfr_ptr sum = Scratch(0);
  mpfr_set_zero(sum, 1);
  for (int64_t j = 0; j < kSoftmaxRow; ++j) {
    mpfr_init2(e[j], kWorkPrec);
    mpfr_set_d(e[j], x[j], MPFR_RNDN);
    mpfr_sub_d(e[j], e[j], mx, MPFR_RNDN);  // exact: the values are close
    mpfr_exp(e[j], e[j], MPFR_RNDN);
    mpfr_add(sum, sum, e[j], MPFR_RNDN);
  }
  for (int64_t j = 0; j < kSoftmaxRow; ++j) {
    mpfr_div(e[j], e[j], sum, MPFR_RNDN);
    out[j] = Finish(e[j], dtype);
    mpfr_clear(e[j]);
  }
}

std::vector<Reference> Compute(const OpSpec& op, DType dtype,
                               const std::vector<double>& inputs, int threads) {
  std::vector<Reference> refs(inputs.size());
  if (IsSoftmax(op)) {
    LOCKSTEP_CHECK(inputs.size() % kSoftmaxRow == 0);
    ParallelFor(inputs.size() / kSoftmaxRow, threads, [&](size_t r) {
      SoftmaxRow(&inputs[r * kSoftmaxRow], dtype, &refs[r * kSoftmaxRow]);
    });
    return refs;
  }
  ParallelForRange(inputs.size(), 1024, threads, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) refs[i] = Elementwise(op, dtype, inputs[i]);
  });
  return refs;
}

// Cache key: op, dtype and a hash of the input bits (FNV-1a, 64 bits).
std::string Key(const OpSpec& op, DType dtype,
                const std::vector<double>& inputs) {
  uint64_t h = 1469598103934665603ull;
  for (double x : inputs) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    h = (h ^ b) * 1099511628211ull;
  }
  return std::string(op.name) + "/" + DTypeShortName(dtype) + "/" +
         std::to_string(inputs.size()) + "/" + std::to_string(h);
}

}  // namespace

Reference ReferenceOf(const OpSpec& op, DType dtype, double x) {
  LOCKSTEP_CHECK(!IsSoftmax(op));
  return Elementwise(op, dtype, x);
}

std::shared_ptr<const std::vector<Reference>> References(
    const OpSpec& op, DType dtype, const std::vector<double>& inputs,
    int threads) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const std::vector<Reference>>>
      cache;
  std::string key = Key(op, dtype, inputs);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto refs = std::make_shared<const std::vector<Reference>>(
      Compute(op, dtype, inputs, threads));
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, refs);
  return refs;
}

}  // namespace lockstep::audit
