// The elementwise bounds of lockstep replay's operator table against MPFR:
// LibTorch's own CPU kernels, measured by the operator audit against
// correctly rounded references (float32 sampled plus special points,
// bfloat16 exhaustively), stay within the table's bound for the dtype, so a
// correct kernel is never a suspect by the table alone. The exceptions are
// written down here and in docs/replay.md: sigmoid, gelu and silu lose
// accuracy where their results are tiny (underflow, cancellation in
// 1 + erf), far beyond any table bound; replay takes 2 x LibTorch CPU's
// own error on the same inputs as the bound there. The test also asserts
// the exceptions still exceed it, so that the list stays true.
#include <gtest/gtest.h>

#include <torch/version.h>

#include <set>

#include "lockstep/numerics/replay_error.h"
#include "lockstep/torch/op_audit.h"
#include "torch/replay_internal.h"

namespace lockstep {
namespace {

TEST(ReplayBoundsTest, CpuKernelsWithinTheTableAgainstMpfr) {
  const std::vector<std::string> ops = {
      "exp",     "exp2", "expm1", "log",   "log2", "log10",     "log1p", "sin",
      "cos",     "tan",  "tanh",  "erf",   "erfc", "atan",      "asin",  "acos",
      "sigmoid", "gelu", "silu",  "rsqrt", "sqrt", "reciprocal"};
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    std::set<std::string> beyond = {"sigmoid", "gelu", "silu"};
#if TORCH_VERSION_MAJOR >= 2
    // torch 2.x's CPU kernels (2.11, AVX2): float32 sqrt is not correctly
    // rounded (0.74 ulp), and bfloat16 erf flushes tiny results to 0 (255
    // ulp at erf(2.1e-38); 56% correctly rounded).
    beyond.insert(dtype == DType::kFloat32 ? "sqrt" : "erf");
#endif
    AuditOptions o;
    o.ops = ops;
    o.dtype = dtype;
    o.samples = 4096;
    o.threads = 2;
    StatusOr<std::vector<OpAudit>> audits = RunAudit(o);
    ASSERT_TRUE(audits.ok()) << audits.status().ToString();
    ASSERT_EQ(audits->size(), ops.size());
    for (const OpAudit& a : *audits) {
      if (!a.skipped.empty()) continue;
      const replay::OpRule* rule = replay::FindOpRule("aten::" + a.op);
      ASSERT_NE(rule, nullptr) << a.op;
      ASSERT_EQ(rule->kind, ReplayOpKind::kElementwise) << a.op;
      ReplayBound b = ReplayErrorBound(rule->kind, rule->ulps, 1, dtype, false);
      // The audit's ulp error is |result - exact| / ulp(exact); replay
      // measures against the exact value rounded to the dtype: 0 where
      // every result is correctly rounded, else at most 0.5 more.
      double replay_ulps = a.correctly_rounded == a.count ? 0 : a.max_ulp + 0.5;
      if (beyond.count(a.op) != 0) {
        EXPECT_GT(replay_ulps, b.ulps) << a.op << ": now within the table";
      } else {
        EXPECT_LE(replay_ulps, b.ulps)
            << a.op << " " << TorchDTypeName(dtype) << ": " << a.max_ulp;
      }
    }
  }
}

}  // namespace
}  // namespace lockstep
