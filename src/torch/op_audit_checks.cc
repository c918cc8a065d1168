// Named point checks of the audit (the values downstream code relies on:
// cos(0) == 1, 1 + cos(fl(pi)) >= 0, the sign of sin(fl(pi)), ...) and the
// range test.
#include <cmath>
#include <cstdio>

#include "lockstep/numerics/ulp.h"
#include "torch/op_audit_internal.h"

namespace lockstep::audit {
namespace {

AuditCheck Judge(const OpSpec& op, const PointCheck& c, DType dtype, double x,
                 double r) {
  std::string call = std::string(op.name) + "(" + Num(x) + ") = " + Num(r);
  switch (c.kind) {
    case PointCheck::kEquals: {
      double v = RoundToFormat(c.value, dtype);
      bool pass = (r == v && (v != 0 || std::signbit(r) == std::signbit(v))) ||
                  (std::isnan(r) && std::isnan(v));
      return {c.name, pass, call};
    }
    case PointCheck::kSignOfRef: {
      double t = ReferenceOf(op, dtype, x).exact;
      bool pass =
          r != 0 && !std::isnan(r) && std::signbit(r) == std::signbit(t);
      return {c.name, pass, call + ", true " + Num(t)};
    }
    case PointCheck::kOnePlusNonNeg: {
      double s = RoundToFormat(1 + r, dtype);  // 1 + r is exact in double
      return {c.name, s >= 0, "1 + " + call + " = " + Num(s)};
    }
    case PointCheck::kNoNaN:
      return {c.name, !std::isnan(r), call};
  }
  return {c.name, false, call};
}

// softmax: a row of equal logits gives exactly 1/n; a row with one logit
// 10000 above the rest gives [1, 0, ...] without NaN (the max is subtracted).
std::vector<AuditCheck> SoftmaxChecks(const OpSpec& op, const OpImpl& impl,
                                      DType dtype, const std::string& device) {
  std::vector<double> in(2 * kSoftmaxRow, 0.0);
  in[kSoftmaxRow] = 10000;
  StatusOr<std::vector<double>> r = RunImpl(impl, op, in, dtype, device);
  if (!r.ok()) return {{"softmax point checks", false, r.status().message()}};
  const std::vector<double>& y = *r;
  bool uniform = true, peak = y[kSoftmaxRow] == 1;
  for (int64_t j = 0; j < kSoftmaxRow; ++j) {
    uniform &= y[j] == 1.0 / kSoftmaxRow;
    if (j > 0) peak &= y[kSoftmaxRow + j] == 0;
  }
  return {{"softmax(64 equal logits) == 1/64", uniform, "first = " + Num(y[0])},
          {"softmax([10000, 0, ...]) == [1, 0, ...]", peak,
           "first = " + Num(y[kSoftmaxRow]) +
               ", second = " + Num(y[kSoftmaxRow + 1])}};
}

}  // namespace

std::vector<AuditCheck> RunPointChecks(const OpSpec& op, const OpImpl& impl,
                                       DType dtype, const std::string& device) {
  if (IsSoftmax(op)) return SoftmaxChecks(op, impl, dtype, device);
  std::vector<double> in;
  for (const PointCheck& c : op.checks) {
    in.push_back(RoundToFormat(c.input, dtype));
  }
  if (in.empty()) return {};
  StatusOr<std::vector<double>> r = RunImpl(impl, op, in, dtype, device);
  if (!r.ok()) return {{"point checks", false, r.status().message()}};
  std::vector<AuditCheck> out;
  for (size_t i = 0; i < in.size(); ++i) {
    out.push_back(Judge(op, op.checks[i], dtype, in[i], (*r)[i]));
  }
  return out;
}

bool OutOfRange(const OpSpec& op, DType dtype, double result,
                double reference) {
  double lo = RoundToFormat(op.range_lo, dtype);
  double hi = RoundToFormat(op.range_hi, dtype);
  auto inside = [&](double v) { return v >= lo && v <= hi; };
  return !std::isnan(result) && !inside(result) && inside(reference);
}

}  // namespace lockstep::audit
