// Operator accuracy audit: runs LibTorch operators (cos, sin, exp, log, tanh,
// sigmoid, erf, gelu, softmax, ...) over a sweep of inputs and measures their
// results against correctly rounded references computed with MPFR.
//
// The sweep: all 65,536 bit patterns for fp16 and bf16 (element-wise ops);
// for fp32, `samples` random inputs (a quarter uniform over all finite bit
// patterns, a quarter uniform over the bit patterns of the op's core
// interval, half uniform in value over it) plus special points with their
// neighbours (zeros, subnormals, +-max, +-inf, NaN, multiples and fractions
// of pi, near zeros and poles, huge arguments, overflow thresholds).
// softmax works on rows of kSoftmaxRow random values; its 16-bit sweep is
// rows of random values (not exhaustive).
//
// Per operator: max and mean ulp error (ulp.h: |result - exact| / ulp(exact);
// a correctly rounded result has <= 0.5) over the inputs where result and
// reference are both finite or the same inf/NaN; the inputs where they are
// not (a NaN or inf where the true value has none, or the reverse) are
// counted apart; the worst inputs with both values; msprobe's ULP,
// absolute-threshold and benchmark standards (accuracy_standard.h; the bench
// is the exact value, the benchmark standard's "GPU" side a correctly rounded
// implementation); and the downstream checks: results outside the function's
// range where the true value is inside (|cos| > 1, sigmoid > 1, ...), and
// named point checks such as "1 + cos(fl(pi)) >= 0" and the sign of
// sin(fl(pi)).
//
// Verdict: an op fails when msprobe's ULP standard (where a correctly rounded
// implementation passes it) or benchmark standard fails, or any downstream
// check fails. Ops the device does not implement for the dtype
// ("not implemented for 'Half'" on CPU LibTorch 1.13) are skipped, not
// failed. Thread safety: RunAudit and AuditOp may be called from one thread
// at a time (they run LibTorch ops and use `threads` threads for MPFR).
#ifndef LOCKSTEP_TORCH_OP_AUDIT_H_
#define LOCKSTEP_TORCH_OP_AUDIT_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/numerics/accuracy_standard.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {

inline constexpr int64_t kSoftmaxRow = 64;

struct AuditOptions {
  std::vector<std::string> ops;   // empty: every op of AuditableOps()
  DType dtype = DType::kFloat32;  // kFloat32, kBFloat16 or kFloat16
  std::string device = "cpu";     // "cpu" or "cuda"
  size_t samples = 1 << 16;       // fp32 random inputs per op (>= 16)
  uint64_t seed = 1;              // of the fp32 and softmax samples
  int threads = 2;                // for the MPFR references
  size_t worst = 5;               // worst inputs kept per op
  // Called with (ops done, ops in all) after each op; may be empty.
  std::function<void(size_t, size_t)> progress;
};

// One input with both values. `reference` is the true value correctly
// rounded to the dtype; `exact` the true value rounded to double.
struct AuditSample {
  double input = 0, result = 0, reference = 0, exact = 0, ulp = 0;
};

struct AuditCheck {
  std::string name;  // "1 + cos(fl(pi)) >= 0"
  bool pass = true;
  std::string detail;  // "1 + cos(3.14159274) = 0"
};

struct OpAudit {
  std::string op, device;
  DType dtype = DType::kFloat32;
  std::string skipped;               // non-empty: not run, and why
  size_t count = 0;                  // inputs measured
  double max_ulp = 0, mean_ulp = 0;  // over comparable results
  size_t correctly_rounded = 0;      // result == reference
  size_t nonfinite_mismatches = 0;   // NaN/inf disagreements
  size_t out_of_range = 0;           // outside the range, reference inside
  std::vector<AuditSample> worst;    // largest ulp first (inf first of all)
  UlpMetrics ulp, ulp_cr;            // msprobe ULP metrics: op, CR baseline
  StandardVerdict ulp_verdict;
  // False when a correctly rounded implementation fails msprobe's ULP
  // standard on this sweep too (msprobe's bf16 ULP arithmetic overflows
  // float32 for |bench| < 2^-121); the verdict then rests on the benchmark
  // standard and the checks.
  bool ulp_applicable = true;
  AbsThresholdMetrics abs;
  StandardVerdict abs_verdict;  // reported only, not in the verdict
  BenchmarkMetrics bench, bench_cr;
  StandardVerdict bench_verdict;
  std::vector<AuditCheck> checks;

  // Skipped ops pass; otherwise the ULP and benchmark standards and every
  // check must pass.
  bool Passed() const;
};

// The operators the audit knows, in report order.
std::vector<std::string> AuditableOps();

// The implementation under test: maps an input tensor (on the audit device,
// of the audit dtype; 2-D [rows, kSoftmaxRow] for softmax) to its result.
using OpImpl = std::function<at::Tensor(const at::Tensor&)>;
// LibTorch's implementation of `op` (at::cos, at::gelu, ...).
// REQUIRES: op is one of AuditableOps().
OpImpl DefaultOpImpl(const std::string& op);

// Audits every op of opts.ops with LibTorch's implementation.
// Errors: InvalidArgument for an unknown op, a dtype other than fp32/bf16/
// fp16, samples < 16, or device "cuda" when LibTorch has no CUDA device.
StatusOr<std::vector<OpAudit>> RunAudit(const AuditOptions& opts);

// Audits `impl` as the implementation of `op` (e.g. a deliberately wrong
// one in tests). opts.ops is ignored.
StatusOr<OpAudit> AuditOp(const std::string& op, const OpImpl& impl,
                          const AuditOptions& opts);

// The stdout table: one line per op, then failed checks and standards.
std::string FormatAuditTable(const std::vector<OpAudit>& audits);

// JSON: {"audits": [{"op", "dtype", "device", "skipped", "count", "max_ulp",
// "mean_ulp", "correctly_rounded", "nonfinite_mismatches", "out_of_range",
// "worst": [{"input", "result", "reference", "exact", "ulp"}], "msprobe":
// {...}, "checks": [...], "pass"}], "pass"}. Non-finite numbers are written
// as the strings "inf", "-inf", "nan"; values with %.9g (fp32 round-trips),
// exact values with %.17g.
std::string AuditToJson(const std::vector<OpAudit>& audits);

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_OP_AUDIT_H_
