// A plain reference for PairMetrics, written from msprobe's description
// (docs/msprobe_reference.md §3.4) and independent of the kernel: the
// relative error's float32/float64 operations are emulated with MPFR
// (correct rounding to 24/53 bits with the format's exponent range and
// subnormals), differences |a-b| are MPFR double subtractions, and sums are
// accumulated in long double.
#ifndef LOCKSTEP_TESTS_COMPARE_METRICS_REFERENCE_H_
#define LOCKSTEP_TESTS_COMPARE_METRICS_REFERENCE_H_

#include <mpfr.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace lockstep::testing {

// IEEE binary32 (single) or binary64 arithmetic on values that the format
// represents exactly, emulated with MPFR.
class IeeeOps {
 public:
  explicit IeeeOps(bool single)
      : prec_(single ? 24 : 53),
        emin_(single ? -148 : -1073),
        emax_(single ? 128 : 1024) {
    mpfr_inits2(prec_, x_, y_, r_, static_cast<mpfr_ptr>(nullptr));
  }
  ~IeeeOps() { mpfr_clears(x_, y_, r_, static_cast<mpfr_ptr>(nullptr)); }
  IeeeOps(const IeeeOps&) = delete;
  IeeeOps& operator=(const IeeeOps&) = delete;

  double Add(double x, double y) { return Apply(mpfr_add, x, y); }
  double Sub(double x, double y) { return Apply(mpfr_sub, x, y); }
  double Div(double x, double y) { return Apply(mpfr_div, x, y); }

 private:
  using Op = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);
  double Apply(Op op, double x, double y) {
    mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
    mpfr_set_emin(emin_);
    mpfr_set_emax(emax_);
    mpfr_set_d(x_, x, MPFR_RNDN);  // exact: x is in the format
    mpfr_set_d(y_, y, MPFR_RNDN);
    int t = op(r_, x_, y_, MPFR_RNDN);
    t = mpfr_check_range(r_, t, MPFR_RNDN);
    mpfr_subnormalize(r_, t, MPFR_RNDN);
    double out = mpfr_get_d(r_, MPFR_RNDN);
    mpfr_set_emin(old_min);
    mpfr_set_emax(old_max);
    return out;
  }
  mpfr_prec_t prec_;
  mpfr_exp_t emin_, emax_;
  mpfr_t x_, y_, r_;
};

// Per-element reference data.
struct RefPair {
  bool mismatch = false;
  int64_t nan_a = 0, nan_b = 0, inf_a = 0, inf_b = 0;
  std::vector<double> a, b;   // after msprobe's zeroing of matched inf/nan
  std::vector<double> re;     // relative error, exact value of the T result
  std::vector<double> abs_d;  // |a - b| in double
  bool single = true;         // T is float32
};

// a, b: element values as double (exact); single: T is float32.
inline RefPair ComputeReference(std::vector<double> a, std::vector<double> b,
                                bool single) {
  RefPair r;
  r.single = single;
  for (size_t i = 0; i < a.size(); ++i) {
    bool na = std::isnan(a[i]), nb = std::isnan(b[i]);
    bool ia = std::isinf(a[i]), ib = std::isinf(b[i]);
    r.nan_a += na;
    r.nan_b += nb;
    r.inf_a += ia;
    r.inf_b += ib;
    if (!(na || nb || ia || ib)) continue;
    if (na == nb && ia == ib) {
      a[i] = b[i] = 0;
    } else {
      r.mismatch = true;
    }
  }
  IeeeOps t(single), f64(false);
  // numpy finfo(T).eps: 2^-23 for float32, 2^-52 for float64.
  double eps = single ? std::ldexp(1.0, -23) : std::ldexp(1.0, -52);
  for (size_t i = 0; i < a.size(); ++i) {
    double n = a[i], bb = b[i];
    if (b[i] == 0) {
      n = t.Add(n, eps);
      bb = t.Add(bb, eps);
    }
    r.re.push_back(std::fabs(t.Div(t.Sub(n, bb), bb)));
    r.abs_d.push_back(std::fabs(f64.Sub(a[i], b[i])));
  }
  r.a = std::move(a);
  r.b = std::move(b);
  return r;
}

// Aggregates of a reference over its first k elements.
struct RefAgg {
  long double dot = 0, sum_a2 = 0, sum_b2 = 0, sum_d2 = 0;
  long double abs_dot = 0;  // sum |a b|: the scale of dot's rounding error
  double max_abs = 0, max_re = 0;
  int64_t c1 = 0, c5 = 0;
};

inline double RefMax(double m, double x) {
  if (std::isnan(m) || std::isnan(x)) return NAN;
  return x > m ? x : m;
}

inline RefAgg Aggregate(const RefPair& r, size_t k) {
  RefAgg g;
  // The thresholds in T: 0.001 and 0.005 rounded to float32 when T is.
  double tol1 = r.single ? static_cast<double>(0.001f) : 0.001;
  double tol5 = r.single ? static_cast<double>(0.005f) : 0.005;
  for (size_t i = 0; i < k; ++i) {
    long double a = r.a[i], b = r.b[i], d = a - b;
    g.dot += a * b;
    g.abs_dot += std::fabs(a * b);
    g.sum_a2 += a * a;
    g.sum_b2 += b * b;
    g.sum_d2 += d * d;
    g.max_abs = RefMax(g.max_abs, r.abs_d[i]);
    g.max_re = RefMax(g.max_re, r.re[i]);
    g.c1 += r.re[i] < tol1;
    g.c5 += r.re[i] < tol5;
  }
  return g;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_COMPARE_METRICS_REFERENCE_H_
