#include "lockstep/torch/op_audit.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "lockstep/core/check.h"
#include "lockstep/numerics/ulp.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/op_audit_internal.h"

namespace lockstep {
namespace audit {

std::string DTypeShortName(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
      return "float16";
    case DType::kBFloat16:
      return "bfloat16";
    default:
      return "float32";
  }
}

StatusOr<std::vector<double>> RunImpl(const OpImpl& impl, const OpSpec& op,
                                      const std::vector<double>& inputs,
                                      DType dtype, const std::string& device) {
  const int64_t n = static_cast<int64_t>(inputs.size());
  c10::ScalarType st = ToScalarType(dtype);
  try {
    at::Tensor x = at::from_blob(const_cast<double*>(inputs.data()), {n},
                                 at::kDouble)
                       .to(st);  // exact: the inputs are values of dtype
    if (IsSoftmax(op)) x = x.view({n / kSoftmaxRow, kSoftmaxRow});
    at::Tensor y = impl(x.to(at::Device(device)));
    y = y.to(at::kCPU).to(at::kDouble).contiguous().reshape({-1});
    if (y.numel() != n) {
      return Status::Internal(op.name,
                              "result has " + std::to_string(y.numel()) +
                                  " elements for " + std::to_string(n));
    }
    const double* p = y.data_ptr<double>();
    return std::vector<double>(p, p + n);
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    if (what.find("not implemented for") != std::string::npos) {
      return Status::NotSupported(op.name, std::string("not implemented for ") +
                                               c10::toString(st) + " on " +
                                               device + " (" + what + ")");
    }
    return Status::NotSupported(op.name, what);
  }
}

namespace {

struct Sweep {
  std::vector<double> input, result, exact, rounded;
};

void KeepWorst(const Sweep& s, const std::vector<double>& ulp, size_t k,
               OpAudit* a) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < ulp.size(); ++i) {
    if (ulp[i] > 0) idx.push_back(i);
  }
  auto worse = [&](size_t x, size_t y) {
    return ulp[x] != ulp[y] ? ulp[x] > ulp[y] : x < y;
  };
  k = std::min(k, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), worse);
  for (size_t j = 0; j < k; ++j) {
    size_t i = idx[j];
    a->worst.push_back(
        {s.input[i], s.result[i], s.rounded[i], s.exact[i], ulp[i]});
  }
}

// Ulp errors, correctly rounded count, non-finite mismatches, range.
void Measure(const OpSpec& op, const Sweep& s, size_t worst, OpAudit* a) {
  std::vector<double> ulp(s.input.size());
  double sum = 0;
  size_t comparable = 0;
  for (size_t i = 0; i < ulp.size(); ++i) {
    double r = s.result[i];
    ulp[i] = UlpError(r, s.exact[i], a->dtype);
    bool same =
        r == s.rounded[i] || (std::isnan(r) && std::isnan(s.rounded[i]));
    a->correctly_rounded += same;
    a->out_of_range += OutOfRange(op, a->dtype, r, s.rounded[i]);
    if (std::isinf(ulp[i])) {
      ++a->nonfinite_mismatches;
      continue;
    }
    a->max_ulp = std::max(a->max_ulp, ulp[i]);
    sum += ulp[i];
    ++comparable;
  }
  a->count = ulp.size();
  a->mean_ulp = comparable ? sum / static_cast<double>(comparable) : 0.0;
  KeepWorst(s, ulp, worst, a);
}

// msprobe's standards over the inputs whose true value is finite in the
// dtype (the others are judged by the non-finite check).
void JudgeMsprobe(const Sweep& s, OpAudit* a) {
  std::vector<double> dev, bench, cr;
  for (size_t i = 0; i < s.input.size(); ++i) {
    if (!std::isfinite(s.rounded[i])) continue;
    dev.push_back(s.result[i]);
    bench.push_back(s.exact[i]);
    cr.push_back(s.rounded[i]);
  }
  if (dev.empty()) return;
  a->ulp = MsprobeUlpMetrics(dev, bench, a->dtype);
  a->ulp_cr = MsprobeUlpMetrics(cr, bench, a->dtype);
  a->ulp_verdict = JudgeUlp(a->ulp, &a->ulp_cr, a->dtype);
  a->ulp_applicable = JudgeUlp(a->ulp_cr, nullptr, a->dtype).pass;
  a->abs = MsprobeAbsThreshold(dev, bench, a->dtype);
  a->abs_verdict = JudgeAbsThreshold(a->abs);
  a->bench = MsprobeBenchmarkMetrics(dev, bench, a->dtype);
  a->bench_cr = MsprobeBenchmarkMetrics(cr, bench, a->dtype);
  a->bench_verdict =
      JudgeBenchmark(a->bench, a->bench_cr, a->dtype, GuardLevelOf(a->op));
}

// Checks over the whole sweep: non-finite agreement, range, softmax sums.
void SweepChecks(const OpSpec& op, const Sweep& s, OpAudit* a) {
  std::string ex;
  for (size_t i = 0; i < s.input.size() && ex.empty(); ++i) {
    if (std::isinf(UlpError(s.result[i], s.exact[i], a->dtype))) {
      ex = ", e.g. " + std::string(op.name) + "(" + Num(s.input[i]) +
           ") = " + Num(s.result[i]) + ", true " + Num(s.exact[i]);
    }
  }
  a->checks.push_back(
      {"NaN/inf only where the true value has them",
       a->nonfinite_mismatches == 0,
       std::to_string(a->nonfinite_mismatches) + " inputs" + ex});
  if (std::isfinite(op.range_lo) || std::isfinite(op.range_hi)) {
    a->checks.push_back(
        {"results within [" + Num(op.range_lo) + ", " + Num(op.range_hi) + "]",
         a->out_of_range == 0,
         std::to_string(a->out_of_range) + " inputs outside"});
  }
  if (!IsSoftmax(op)) return;
  double worst = 0;
  for (size_t r = 0; r + kSoftmaxRow <= s.result.size(); r += kSoftmaxRow) {
    double sum = 0;
    for (int64_t j = 0; j < kSoftmaxRow; ++j) sum += s.result[r + j];
    worst = std::max(worst, std::fabs(sum - 1) / Ulp(1.0, a->dtype));
  }
  a->checks.push_back({"rows sum to 1 within 4 ulp(1)", worst <= 4,
                       "worst row off by " + Num(worst) + " ulp(1)"});
}

Status Validate(const AuditOptions& o) {
  if (o.dtype != DType::kFloat32 && o.dtype != DType::kBFloat16 &&
      o.dtype != DType::kFloat16) {
    return Status::InvalidArgument("audit dtype",
                                   "must be float32, bfloat16 or float16");
  }
  if (o.samples < 16) {
    return Status::InvalidArgument("audit samples", "must be at least 16");
  }
  if (o.device != "cpu" && o.device.rfind("cuda", 0) != 0) {
    return Status::InvalidArgument("audit device '" + o.device + "'",
                                   "must be cpu or cuda");
  }
  if (o.device != "cpu" && !at::hasCUDA()) {
    return Status::InvalidArgument(
        "audit device '" + o.device + "'",
        "LibTorch sees no CUDA device here (CPU-only build or no GPU). "
        "Note: use --device cpu, or run on a machine with a GPU");
  }
  return Status::Ok();
}

}  // namespace
}  // namespace audit

StatusOr<OpAudit> AuditOp(const std::string& op, const OpImpl& impl,
                          const AuditOptions& opts) {
  LOCKSTEP_RETURN_IF_ERROR(audit::Validate(opts));
  const audit::OpSpec* spec = audit::FindOp(op);
  if (spec == nullptr) {
    return Status::InvalidArgument("audit op '" + op + "'", "unknown operator");
  }
  OpAudit a;
  a.op = op;
  a.dtype = opts.dtype;
  a.device = opts.device;
  audit::Sweep s;
  s.input = audit::SweepInputs(*spec, opts.dtype, opts.samples, opts.seed);
  StatusOr<std::vector<double>> result =
      audit::RunImpl(impl, *spec, s.input, opts.dtype, opts.device);
  if (!result.ok()) {
    a.skipped = result.status().message();
    return a;
  }
  s.result = std::move(*result);
  auto refs = audit::References(*spec, opts.dtype, s.input, opts.threads);
  for (const audit::Reference& r : *refs) {
    s.exact.push_back(r.exact);
    s.rounded.push_back(r.rounded);
  }
  audit::Measure(*spec, s, opts.worst, &a);
  audit::JudgeMsprobe(s, &a);
  audit::SweepChecks(*spec, s, &a);
  for (AuditCheck& c :
       audit::RunPointChecks(*spec, impl, opts.dtype, opts.device)) {
    a.checks.push_back(std::move(c));
  }
  return a;
}

StatusOr<std::vector<OpAudit>> RunAudit(const AuditOptions& opts) {
  LOCKSTEP_RETURN_IF_ERROR(audit::Validate(opts));
  std::vector<std::string> ops = opts.ops.empty() ? AuditableOps() : opts.ops;
  for (const std::string& op : ops) {
    if (audit::FindOp(op) == nullptr) {
      std::string all;
      for (const std::string& n : AuditableOps())
        all += (all.empty() ? "" : ",") + n;
      return Status::InvalidArgument("audit op '" + op + "'",
                                     "unknown operator. Note: one of " + all);
    }
  }
  std::vector<OpAudit> out;
  for (const std::string& op : ops) {
    StatusOr<OpAudit> a = AuditOp(op, DefaultOpImpl(op), opts);
    if (!a.ok()) return a.status();
    out.push_back(std::move(*a));
    if (opts.progress) opts.progress(out.size(), ops.size());
  }
  return out;
}

bool OpAudit::Passed() const {
  if (!skipped.empty()) return true;
  if ((!ulp_verdict.pass && ulp_applicable) || !bench_verdict.pass) {
    return false;
  }
  return std::all_of(checks.begin(), checks.end(),
                     [](const AuditCheck& c) { return c.pass; });
}

OpImpl DefaultOpImpl(const std::string& op) {
  using T = at::Tensor;
  static const std::map<std::string, T (*)(const T&)> kOps = {
      {"cos", at::cos},
      {"sin", at::sin},
      {"tan", at::tan},
      {"exp", at::exp},
      {"exp2", at::exp2},
      {"expm1", at::expm1},
      {"log", at::log},
      {"log2", at::log2},
      {"log10", at::log10},
      {"log1p", at::log1p},
      {"sqrt", at::sqrt},
      {"rsqrt", at::rsqrt},
      {"tanh", at::tanh},
      {"sigmoid", at::sigmoid},
      {"erf", at::erf},
      {"erfc", at::erfc},
      {"silu", at::silu},
      {"atan", at::atan},
      {"asin", at::asin},
      {"acos", at::acos},
      {"sinh", at::sinh},
      {"cosh", at::cosh},
      {"reciprocal", at::reciprocal}};
  if (op == "gelu") return [](const T& x) { return at::gelu(x); };
  if (op == "softmax") return [](const T& x) { return at::softmax(x, -1); };
  auto it = kOps.find(op);
  LOCKSTEP_CHECK(it != kOps.end());
  T (*fn)(const T&) = it->second;
  return [fn](const T& x) { return fn(x); };
}

}  // namespace lockstep
