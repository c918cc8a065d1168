// The audited operators: MPFR definitions of the true functions, their
// ranges, sampling intervals, special points and named checks.
#include <cmath>
#include <limits>

#include "torch/op_audit_internal.h"

namespace lockstep::audit {
namespace {

constexpr double kPi2 = kPi / 2;
// Minimum values of gelu and silu (x * Phi(x) at x = -0.7518, x * sigmoid(x)
// at x = -1.2785), rounded down in the 8th digit.
constexpr double kGeluMin = -0.1699713;
constexpr double kSiluMin = -0.2784646;

#define LOCKSTEP_MPFR1(fn) \
  [](mpfr_ptr y, mpfr_srcptr x) { fn(y, x, MPFR_RNDN); }

// 1 / (1 + e^-x) into t.
void OnePlusExpNegInverse(mpfr_ptr t, mpfr_srcptr x) {
  mpfr_neg(t, x, MPFR_RNDN);
  mpfr_exp(t, t, MPFR_RNDN);
  mpfr_add_ui(t, t, 1, MPFR_RNDN);
  mpfr_ui_div(t, 1, t, MPFR_RNDN);
}

void Sigmoid(mpfr_ptr y, mpfr_srcptr x) { OnePlusExpNegInverse(y, x); }

// x * sigmoid(x); the limit -0 at -inf (where x * 0 would be NaN).
void Silu(mpfr_ptr y, mpfr_srcptr x) {
  if (mpfr_inf_p(x) && mpfr_sgn(x) < 0) {
    mpfr_set_zero(y, -1);
    return;
  }
  mpfr_ptr t = Scratch(0);
  OnePlusExpNegInverse(t, x);
  mpfr_mul(y, x, t, MPFR_RNDN);
}

// x * Phi(x) = x * erfc(-x / sqrt 2) / 2 (erfc avoids the cancellation of
// 1 + erf for negative x); the limit -0 at -inf.
void Gelu(mpfr_ptr y, mpfr_srcptr x) {
  if (mpfr_inf_p(x) && mpfr_sgn(x) < 0) {
    mpfr_set_zero(y, -1);
    return;
  }
  mpfr_ptr t = Scratch(0);
  mpfr_sqrt_ui(t, 2, MPFR_RNDN);
  mpfr_div(t, x, t, MPFR_RNDN);
  mpfr_neg(t, t, MPFR_RNDN);
  mpfr_erfc(t, t, MPFR_RNDN);
  mpfr_mul(y, x, t, MPFR_RNDN);
  mpfr_div_2ui(y, y, 1, MPFR_RNDN);
}

// 1 / sqrt(x), so that rsqrt(-0) = 1 / -0 = -inf as 1/sqrt gives in
// LibTorch (mpfr_rec_sqrt(-0) is +inf).
void Rsqrt(mpfr_ptr y, mpfr_srcptr x) {
  mpfr_ptr t = Scratch(0);
  mpfr_sqrt(t, x, MPFR_RNDN);
  mpfr_ui_div(y, 1, t, MPFR_RNDN);
}

void Reciprocal(mpfr_ptr y, mpfr_srcptr x) { mpfr_ui_div(y, 1, x, MPFR_RNDN); }

using K = PointCheck::Kind;

// cos, sin, tan.
void AddTrig(std::vector<OpSpec>* v) {
  std::vector<OpSpec>& s = *v;
  s.push_back({"cos",
               LOCKSTEP_MPFR1(mpfr_cos),
               -1,
               1,
               -200,
               200,
               {},
               {{"cos(0) == 1", 0, K::kEquals, 1},
                {"1 + cos(fl(pi)) >= 0", kPi, K::kOnePlusNonNeg},
                {"cos(fl(pi/2)) has the true sign", kPi2, K::kSignOfRef}}});
  s.push_back({"sin",
               LOCKSTEP_MPFR1(mpfr_sin),
               -1,
               1,
               -200,
               200,
               {},
               {{"sin(0) == 0", 0, K::kEquals, 0},
                {"sin(-0) == -0", -0.0, K::kEquals, -0.0},
                {"sin(fl(pi)) has the true sign", kPi, K::kSignOfRef},
                {"sin(fl(pi/2)) == 1", kPi2, K::kEquals, 1}}});
  s.push_back({"tan",
               LOCKSTEP_MPFR1(mpfr_tan),
               -kInf,
               kInf,
               -200,
               200,
               {},
               {{"tan(0) == 0", 0, K::kEquals, 0},
                {"tan(fl(pi/2)) has the true sign", kPi2, K::kSignOfRef}}});
}

// exp, exp2, expm1, log, log2, log10, log1p.
void AddExpLog(std::vector<OpSpec>* v) {
  std::vector<OpSpec>& s = *v;
  s.push_back({"exp",
               LOCKSTEP_MPFR1(mpfr_exp),
               0,
               kInf,
               -104,
               89,
               {88.7228391, -87.3365448, -103.972076, 1e-8, -1e-8},
               {{"exp(0) == 1", 0, K::kEquals, 1},
                {"exp(-inf) == 0", -kInf, K::kEquals, 0},
                {"exp(inf) == inf", kInf, K::kEquals, kInf}}});
  s.push_back({"exp2",
               LOCKSTEP_MPFR1(mpfr_exp2),
               0,
               kInf,
               -150,
               128,
               {127.999992, -126, -149, -150},
               {{"exp2(0) == 1", 0, K::kEquals, 1},
                {"exp2(10) == 1024", 10, K::kEquals, 1024}}});
  s.push_back({"expm1",
               LOCKSTEP_MPFR1(mpfr_expm1),
               -1,
               kInf,
               -20,
               89,
               {1e-8, -1e-8, 1e-30, -1e-30, 88.7228391},
               {{"expm1(0) == 0", 0, K::kEquals, 0},
                {"expm1(-0) == -0", -0.0, K::kEquals, -0.0}}});
  s.push_back({"log",
               LOCKSTEP_MPFR1(mpfr_log),
               -kInf,
               kInf,
               0,
               1e6,
               {0.9999999, 1.0000001},
               {{"log(1) == 0", 1, K::kEquals, 0},
                {"log(0) == -inf", 0, K::kEquals, -kInf},
                {"log(inf) == inf", kInf, K::kEquals, kInf}}});
  s.push_back({"log2",
               LOCKSTEP_MPFR1(mpfr_log2),
               -kInf,
               kInf,
               0,
               1e6,
               {},
               {{"log2(1) == 0", 1, K::kEquals, 0},
                {"log2(1024) == 10", 1024, K::kEquals, 10},
                {"log2(0.5) == -1", 0.5, K::kEquals, -1}}});
  s.push_back({"log10",
               LOCKSTEP_MPFR1(mpfr_log10),
               -kInf,
               kInf,
               0,
               1e6,
               {},
               {{"log10(1) == 0", 1, K::kEquals, 0},
                {"log10(1000) == 3", 1000, K::kEquals, 3}}});
  s.push_back({"log1p",
               LOCKSTEP_MPFR1(mpfr_log1p),
               -kInf,
               kInf,
               -1,
               1e4,
               {1e-8, -1e-8, 1e-30, -0.9999999},
               {{"log1p(0) == 0", 0, K::kEquals, 0},
                {"log1p(-0) == -0", -0.0, K::kEquals, -0.0},
                {"log1p(-1) == -inf", -1, K::kEquals, -kInf}}});
}

// sqrt, rsqrt.
void AddRoots(std::vector<OpSpec>* v) {
  std::vector<OpSpec>& s = *v;
  s.push_back({"sqrt",
               LOCKSTEP_MPFR1(mpfr_sqrt),
               0,
               kInf,
               0,
               1e4,
               {},
               {{"sqrt(4) == 2", 4, K::kEquals, 2},
                {"sqrt(-0) == -0", -0.0, K::kEquals, -0.0},
                {"sqrt(inf) == inf", kInf, K::kEquals, kInf}}});
  s.push_back({"rsqrt",
               Rsqrt,
               0,
               kInf,
               0,
               1e4,
               {},
               {{"rsqrt(4) == 0.5", 4, K::kEquals, 0.5},
                {"rsqrt(0) == inf", 0, K::kEquals, kInf}}});
}

// tanh, sigmoid, erf, erfc, gelu, silu.
void AddActivations(std::vector<OpSpec>* v) {
  std::vector<OpSpec>& s = *v;
  s.push_back({"tanh",
               LOCKSTEP_MPFR1(mpfr_tanh),
               -1,
               1,
               -10,
               10,
               {9.01091, 9.011, -9.01091},
               {{"tanh(0) == 0", 0, K::kEquals, 0},
                {"tanh(-0) == -0", -0.0, K::kEquals, -0.0},
                {"tanh(20) == 1", 20, K::kEquals, 1},
                {"tanh(-inf) == -1", -kInf, K::kEquals, -1}}});
  s.push_back({"sigmoid",
               Sigmoid,
               0,
               1,
               -30,
               30,
               {16.6355, 17.0, -88.7, -104},
               {{"sigmoid(0) == 0.5", 0, K::kEquals, 0.5},
                {"sigmoid(40) == 1", 40, K::kEquals, 1},
                {"sigmoid(-inf) == 0", -kInf, K::kEquals, 0},
                {"sigmoid(inf) == 1", kInf, K::kEquals, 1}}});
  s.push_back({"erf",
               LOCKSTEP_MPFR1(mpfr_erf),
               -1,
               1,
               -6,
               6,
               {3.9192, 4.0},
               {{"erf(0) == 0", 0, K::kEquals, 0},
                {"erf(-0) == -0", -0.0, K::kEquals, -0.0},
                {"erf(6) == 1", 6, K::kEquals, 1},
                {"erf(inf) == 1", kInf, K::kEquals, 1}}});
  s.push_back({"erfc",
               LOCKSTEP_MPFR1(mpfr_erfc),
               0,
               2,
               -6,
               12,
               {10.0546},
               {{"erfc(0) == 1", 0, K::kEquals, 1},
                {"erfc(inf) == 0", kInf, K::kEquals, 0},
                {"erfc(-inf) == 2", -kInf, K::kEquals, 2}}});
  s.push_back({"gelu",
               Gelu,
               kGeluMin,
               kInf,
               -10,
               10,
               {-0.7517915, -5.5},
               {{"gelu(0) == 0", 0, K::kEquals, 0},
                {"gelu(-inf) is not NaN", -kInf, K::kNoNaN}}});
  s.push_back({"silu",
               Silu,
               kSiluMin,
               kInf,
               -30,
               30,
               {-1.2784645},
               {{"silu(0) == 0", 0, K::kEquals, 0},
                {"silu(-inf) is not NaN", -kInf, K::kNoNaN}}});
}

// atan, asin, acos, sinh, cosh, reciprocal, softmax.
void AddOthers(std::vector<OpSpec>* v) {
  std::vector<OpSpec>& s = *v;
  s.push_back({"atan",
               LOCKSTEP_MPFR1(mpfr_atan),
               -kPi2,
               kPi2,
               -100,
               100,
               {},
               {{"atan(0) == 0", 0, K::kEquals, 0},
                {"atan(inf) == fl(pi/2)", kInf, K::kEquals, kPi2}}});
  s.push_back({"asin",
               LOCKSTEP_MPFR1(mpfr_asin),
               -kPi2,
               kPi2,
               -1,
               1,
               {},
               {{"asin(0) == 0", 0, K::kEquals, 0},
                {"asin(1) == fl(pi/2)", 1, K::kEquals, kPi2}}});
  s.push_back({"acos",
               LOCKSTEP_MPFR1(mpfr_acos),
               0,
               kPi,
               -1,
               1,
               {},
               {{"acos(1) == 0", 1, K::kEquals, 0},
                {"acos(-1) == fl(pi)", -1, K::kEquals, kPi}}});
  s.push_back({"sinh",
               LOCKSTEP_MPFR1(mpfr_sinh),
               -kInf,
               kInf,
               -90,
               90,
               {},
               {{"sinh(0) == 0", 0, K::kEquals, 0}}});
  s.push_back({"cosh",
               LOCKSTEP_MPFR1(mpfr_cosh),
               1,
               kInf,
               -90,
               90,
               {},
               {{"cosh(0) == 1", 0, K::kEquals, 1}}});
  s.push_back({"reciprocal",
               Reciprocal,
               -kInf,
               kInf,
               -100,
               100,
               {},
               {{"reciprocal(4) == 0.25", 4, K::kEquals, 0.25},
                {"reciprocal(-0) == -inf", -0.0, K::kEquals, -kInf}}});
  s.push_back({"softmax", nullptr, 0, 1, -20, 20, {}, {}});
}

std::vector<OpSpec> BuildSpecs() {
  std::vector<OpSpec> s;
  AddTrig(&s);
  AddExpLog(&s);
  AddRoots(&s);
  AddActivations(&s);
  AddOthers(&s);
  return s;
}

}  // namespace

mpfr_ptr Scratch(int i) {
  struct Values {
    Values() {
      for (auto& v : t) mpfr_init2(v, kWorkPrec);
    }
    ~Values() {
      for (auto& v : t) mpfr_clear(v);
      // MPFR keeps constants (log 2, pi) and exp's tables per thread; a
      // worker thread of ParallelFor that ends would leave them allocated
      // (LeakSanitizer reported them).
      mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);
    }
    mpfr_t t[4];
  };
  thread_local Values values;
  return values.t[i];
}

const std::vector<OpSpec>& OpSpecs() {
  static const std::vector<OpSpec> specs = BuildSpecs();
  return specs;
}

const OpSpec* FindOp(const std::string& name) {
  for (const OpSpec& s : OpSpecs()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

bool IsSoftmax(const OpSpec& op) { return op.reference == nullptr; }

}  // namespace lockstep::audit

namespace lockstep {

std::vector<std::string> AuditableOps() {
  std::vector<std::string> names;
  for (const audit::OpSpec& s : audit::OpSpecs()) names.push_back(s.name);
  return names;
}

}  // namespace lockstep
