// Internals of the operator audit (op_audit.h): the op table, the input
// sweeps and the MPFR references.
#ifndef LOCKSTEP_SRC_TORCH_OP_AUDIT_INTERNAL_H_
#define LOCKSTEP_SRC_TORCH_OP_AUDIT_INTERNAL_H_

#include <mpfr.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/torch/op_audit.h"

namespace lockstep::audit {

// Working precision of the references: every intermediate of a composite
// function (sigmoid, gelu, ...) is rounded to 160 bits, so the final value is
// within 2^-150 (relative) of the truth, far below the double rounding the
// references then get.
inline constexpr mpfr_prec_t kWorkPrec = 160;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kPi = 3.14159265358979323846;

// y = f(x) at y's precision. May use the thread's scratch values (Scratch).
using MpfrFn = void (*)(mpfr_ptr y, mpfr_srcptr x);

// Per-thread MPFR scratch values at kWorkPrec.
mpfr_ptr Scratch(int i);  // REQUIRES: 0 <= i < 4

// A named check at one input (rounded to the dtype before use).
struct PointCheck {
  enum Kind {
    kEquals,         // result == value (and the same sign when 0)
    kSignOfRef,      // result has the sign of the reference, and is != 0
    kOnePlusNonNeg,  // 1 + result >= 0 (computed in the dtype)
    kNoNaN,          // result is not NaN
  };
  const char* name;
  double input;
  Kind kind;
  double value = 0;
};

struct OpSpec {
  const char* name;
  MpfrFn reference;           // nullptr for softmax
  double range_lo, range_hi;  // the function's image
  double core_lo, core_hi;    // the fp32 sampling interval
  std::vector<double> extra;  // op-specific special points (fp32)
  std::vector<PointCheck> checks;
};

const std::vector<OpSpec>& OpSpecs();
const OpSpec* FindOp(const std::string& name);  // nullptr when unknown
bool IsSoftmax(const OpSpec& op);

// The inputs of `op`'s sweep in `dtype` (values of the dtype, as doubles).
// Element-wise ops: all 16-bit patterns, or fp32 samples + special points.
// softmax: rows of kSoftmaxRow values, row-major.
std::vector<double> SweepInputs(const OpSpec& op, DType dtype, size_t samples,
                                uint64_t seed);

// The true value of f(x): rounded to double, and correctly rounded to the
// dtype (with MPFR's knowledge of which side of the double it lies).
struct Reference {
  double exact;
  double rounded;
};

// References for `inputs` (cached per op, dtype and input set; computed on
// `threads` threads). For softmax, per element of the rows.
std::shared_ptr<const std::vector<Reference>> References(
    const OpSpec& op, DType dtype, const std::vector<double>& inputs,
    int threads);

// Reference of one element-wise input. REQUIRES: !IsSoftmax(op).
Reference ReferenceOf(const OpSpec& op, DType dtype, double x);

// Runs impl on `inputs` (shape [n] or [n / kSoftmaxRow, kSoftmaxRow]) as a
// `dtype` tensor on `device`; the results widened to double. A LibTorch
// error becomes NotSupported with its first line ("... not implemented for
// 'Half'").
StatusOr<std::vector<double>> RunImpl(const OpImpl& impl, const OpSpec& op,
                                      const std::vector<double>& inputs,
                                      DType dtype, const std::string& device);

// The named checks and the range check's inputs (results outside the range
// while the reference is inside).
std::vector<AuditCheck> RunPointChecks(const OpSpec& op, const OpImpl& impl,
                                       DType dtype, const std::string& device);
bool OutOfRange(const OpSpec& op, DType dtype, double result, double reference);

std::string DTypeShortName(DType dtype);  // "float32", "bfloat16", "float16"
// x with %.9g (round-trips fp32); "inf", "-inf", "nan".
std::string Num(double x);

}  // namespace lockstep::audit

#endif  // LOCKSTEP_SRC_TORCH_OP_AUDIT_INTERNAL_H_
