// The checks of one replayed call: the float64, |inputs| and recorded-dtype
// runs, and each recorded tensor measured against its bound.
#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>

#include "lockstep/format/tensor.h"
#include "lockstep/numerics/replay_error.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/replay_internal.h"

namespace lockstep::replay {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool IsScalarTypeArg(const c10::Argument& a) {
  const c10::TypePtr& t = a.real_type();
  if (t->kind() == c10::TypeKind::ScalarTypeType) return true;
  return t->kind() == c10::TypeKind::OptionalType &&
         t->containedType(0)->kind() == c10::TypeKind::ScalarTypeType;
}

// A Python float operand (x * 0.9, eps, alpha) as a kernel computing in fp32
// sees it: rounded to fp32 (PyTorch's CPU and CUDA kernels cast scalars to
// the op's compute type, fp32 for fp16/bf16/fp32 tensors).
double ScalarAsComputed(double x, bool fp32_compute) {
  return fp32_compute ? static_cast<double>(static_cast<float>(x)) : x;
}

c10::IValue PrepareValue(const c10::IValue& v, const c10::Argument& a, Mode m,
                         bool fp32_compute) {
  bool reference = m == Mode::kFloat64 || m == Mode::kAbs;
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) {
      at::Tensor p = t.clone();
      if (reference && p.is_floating_point()) {
        double x = ScalarAsComputed(p.item<double>(), fp32_compute);
        p.fill_(m == Mode::kAbs ? std::fabs(x) : x);
      }
      p.unsafeGetTensorImpl()->set_wrapped_number(true);
      return p;
    }
    return PrepareTensor(t, m);
  }
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList())
      out.push_back(PrepareTensor(t, m));
    return out;
  }
  if (v.isList() &&
      v.toList().elementType()->kind() == c10::TypeKind::OptionalType) {
    c10::List<c10::optional<at::Tensor>> out;
    for (const c10::IValue& item : v.toList().vec()) {
      out.push_back(item.isNone() ? c10::optional<at::Tensor>()
                                  : PrepareTensor(item.toTensor(), m));
    }
    return out;
  }
  if (v.isInt() && IsScalarTypeArg(a)) {
    auto st = static_cast<c10::ScalarType>(v.toInt());
    if ((m == Mode::kFloat64 || m == Mode::kAbs) && c10::isFloatingType(st)) {
      return static_cast<int64_t>(at::kDouble);
    }
    if (m == Mode::kEmulated && st == at::kHalf) {
      return static_cast<int64_t>(at::kFloat);
    }
  }
  if (reference && v.isDouble()) {
    double x = ScalarAsComputed(v.toDouble(), fp32_compute);
    return m == Mode::kAbs ? std::fabs(x) : x;
  }
  return v;
}

bool IsHalfNotImplemented(const std::exception& e) {
  return std::string_view(e.what()).find("not implemented for 'Half'") !=
         std::string_view::npos;
}

bool HasHalf(const BoundCall& call) {
  for (const c10::IValue& v : call.args) {
    if (v.isTensor() && v.toTensor().scalar_type() == at::kHalf) return true;
    if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) {
        if (t.scalar_type() == at::kHalf) return true;
      }
    }
  }
  return false;
}

std::vector<double> ToDoubles(const at::Tensor& t) {
  at::Tensor d = t.detach().to(at::kDouble).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

}  // namespace

void FlattenResult(const c10::IValue& v, std::vector<c10::IValue>* out) {
  if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements())
      FlattenResult(e, out);
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList()) out->emplace_back(t);
  } else if (v.isList()) {
    for (const c10::IValue& e : v.toList().vec()) FlattenResult(e, out);
  } else {
    out->push_back(v);
  }
}

at::Tensor PrepareTensor(const at::Tensor& t, Mode m) {
  if (!t.is_floating_point()) return t.clone();
  switch (m) {
    case Mode::kFloat64:
      return t.to(at::kDouble).clone();
    case Mode::kAbs:
      return t.to(at::kDouble).abs();
    case Mode::kRecorded:
      return t.clone();
    case Mode::kEmulated:
      return t.scalar_type() == at::kHalf ? t.to(at::kFloat) : t.clone();
  }
  return t;
}

std::vector<c10::IValue> Prepare(const BoundCall& call, Mode m) {
  const auto& params = call.op.schema().arguments();
  // fp32 compute unless a float64 tensor takes part.
  bool fp32_compute = true;
  for (const c10::IValue& v : call.args) {
    if (v.isTensor() && v.toTensor().scalar_type() == at::kDouble &&
        !v.toTensor().unsafeGetTensorImpl()->is_wrapped_number()) {
      fp32_compute = false;
    }
  }
  std::vector<c10::IValue> args;
  args.reserve(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    args.push_back(PrepareValue(call.args[i], params[i], m, fp32_compute));
  }
  return args;
}

std::vector<c10::IValue> Call(const BoundCall& call,
                              std::vector<c10::IValue> args) {
  torch::jit::Stack stack(std::move(args));
  WithinBudget(call, [&] { call.op.callBoxed(&stack); });
  std::vector<c10::IValue> out;
  for (const c10::IValue& v : stack) FlattenResult(v, &out);
  // A view the operator made from its arguments is read below: its
  // elements must lie inside its storage.
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].isTensor()) continue;
    if (std::string p = GeometryProblem(out[i].toTensor()); !p.empty()) {
      throw CallRefused(
          call.name, "refused: its output " + std::to_string(i) + " has " + p);
    }
  }
  return out;
}

// The call's tensor inputs in the order their gradients are recorded:
// lockstep's probe records one per tensor argument (null where none flows);
// msprobe one per differentiable (floating) tensor argument. Wrapped numbers
// are not inputs.
std::vector<at::Tensor*> TensorInputs(std::vector<c10::IValue>* args,
                                      bool floating_only) {
  std::vector<at::Tensor*> out;
  for (c10::IValue& v : *args) {
    if (!v.isTensor()) continue;
    at::Tensor& t = v.toTensor();
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) continue;
    if (floating_only && !t.is_floating_point()) continue;
    out.push_back(&t);
  }
  return out;
}

// Measures `recorded` against the float64 `reference` (and LibTorch CPU's
// `cpu`, the `abs` scale where given) and fills `c`'s numbers and verdict.
void Check(const at::Tensor& recorded, const at::Tensor& reference,
           const at::Tensor* abs, const at::Tensor* cpu, const Rule& rule,
           bool backward, ReplayCheck* c) {
  c->kind = rule.kind_name;
  std::optional<DType> dt = FromScalarType(recorded.scalar_type());
  if (recorded.sizes() != reference.sizes()) {
    c->verdict = ReplayVerdict::kNotReplayable;
    c->reason = "the replay gives shape " +
                ShapeToString(reference.sizes().vec()) + ", the dump records " +
                ShapeToString(recorded.sizes().vec());
    return;
  }
  if (!dt || !IsFloatingPoint(*dt)) {
    // Integers and booleans: equal or not.
    at::Tensor differ =
        recorded.to(at::kDouble).ne(reference.to(at::kDouble)).sum();
    int64_t n = differ.item<int64_t>();
    c->kind = "exact";
    c->max_ulp = n == 0 ? 0 : std::numeric_limits<double>::infinity();
    c->bound = 0;
    c->bound_rule = "integer result: equal";
    c->cpu_ulp = kNaN;
    if (n > 0) {
      c->verdict = ReplayVerdict::kSuspect;
      c->reason = std::to_string(n) + " of " +
                  std::to_string(recorded.numel()) + " values differ";
    }
    return;
  }
  std::vector<double> rec = ToDoubles(recorded);
  std::vector<double> ref = ToDoubles(reference);
  std::vector<double> scale;
  if (abs != nullptr && abs->sizes() == reference.sizes()) {
    scale = ToDoubles(*abs);
  }
  ReplayScale mode = rule.scale;
  if (mode == ReplayScale::kAbsInputs && scale.empty()) {
    mode = ReplayScale::kTensorMax;
  }
  ReplayError e = MeasureReplayError(rec.data(), ref.data(),
                                     scale.empty() ? nullptr : scale.data(),
                                     rec.size(), *dt, mode);
  c->max_ulp = e.max_ulp;
  c->max_rel = e.max_rel;
  c->worst_index = static_cast<int64_t>(e.worst);
  c->recorded = e.worst_recorded;
  c->reference = e.worst_reference;
  if (cpu != nullptr && cpu->sizes() == reference.sizes()) {
    at::Tensor cpu_t = cpu->to(recorded.scalar_type());
    std::vector<double> cv = ToDoubles(cpu_t);
    c->cpu_ulp = MeasureReplayError(cv.data(), ref.data(),
                                    scale.empty() ? nullptr : scale.data(),
                                    cv.size(), *dt, mode)
                     .max_ulp;
  }
  ReplayBound b = ReplayErrorBound(rule.kind, rule.ulps, rule.k, *dt, backward);
  c->bound = b.ulps;
  c->bound_rule = b.rule;
  if (std::isfinite(c->cpu_ulp) && 2 * c->cpu_ulp > c->bound) {
    c->bound = 2 * c->cpu_ulp;
    c->bound_rule = "2 x LibTorch CPU's own error on these inputs (" +
                    ReplayNumber(c->cpu_ulp) + " ulp; the table gives " +
                    b.rule + ")";
  }
  if (e.nonfinite_mismatch > 0) {
    c->verdict = ReplayVerdict::kSuspect;
    c->reason = std::to_string(e.nonfinite_mismatch) +
                " elements are NaN or inf where the float64 replay is not "
                "(or the reverse)";
  } else if (c->max_ulp > c->bound) {
    c->verdict = ReplayVerdict::kSuspect;
    c->reason = ReplayNumber(c->max_ulp) + " ulp > bound " +
                ReplayNumber(c->bound) + " (element " +
                std::to_string(c->worst_index) + ": recorded " +
                ReplayNumber(c->recorded) + ", float64 replay " +
                ReplayNumber(c->reference) + ")";
  }
}

Rule ForwardRule(const std::string& op, const std::vector<c10::IValue>& args,
                 const std::vector<at::Tensor>& outs) {
  Rule r;
  if (const OpRule* o = replay::FindOpRule(op)) {
    r.kind = o->kind;
    r.ulps = o->ulps;
    r.scale = o->scale;
    r.k = replay::TermCount(*o, args, outs);
    r.kind_name = o->what;
    if ((op.starts_with("aten::add") || op.starts_with("aten::sub")) &&
        args.size() > 2 && (args[2].isDouble() || args[2].isInt())) {
      double alpha = args[2].isDouble() ? args[2].toDouble()
                                        : static_cast<double>(args[2].toInt());
      if (alpha != 1) r.ulps = 1;  // x + alpha * y: two roundings
    }
    // x / scalar: kernels multiply by the reciprocal (LibTorch's CPU and
    // CUDA alike): two roundings.
    if ((op.starts_with("aten::div") || op.starts_with("aten::true_divide")) &&
        args.size() > 1 &&
        (!args[1].isTensor() || args[1].toTensor().dim() == 0)) {
      r.ulps = 1;
    }
    return r;
  }
  // An operator the table does not list: the lenient normalisation bound
  // over its largest input.
  int64_t k = 1;
  for (const c10::IValue& v : args) {
    if (v.isTensor()) k = std::max<int64_t>(k, v.toTensor().numel());
  }
  r.k = k;
  r.kind_name = "unlisted";
  return r;
}

// LibTorch CPU in the recorded dtype (fp16 through fp32 where LibTorch
// 1.13 has no fp16 kernel).
std::optional<std::vector<c10::IValue>> CpuRun(
    const BoundCall& call,
    const std::function<std::vector<c10::IValue>(Mode)>& run) {
  try {
    return run(Mode::kRecorded);
  } catch (const std::exception& ex) {
    if (!IsHalfNotImplemented(ex) || !HasHalf(call)) return std::nullopt;
  }
  try {
    return run(Mode::kEmulated);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void CheckForward(const BoundCall& call,
                  const std::vector<std::optional<at::Tensor>>& recorded_outs,
                  const ReplayCheck& base, std::vector<ReplayCheck>* out) {
  const std::vector<std::optional<at::Tensor>>* recorded = &recorded_outs;
  const BoundCall* callp = &call;
  at::NoGradGuard no_grad;
  auto run = [&](Mode m) { return Call(*callp, Prepare(*callp, m)); };
  std::vector<c10::IValue> ref = run(Mode::kFloat64);
  std::vector<at::Tensor> ref_tensors;
  for (const c10::IValue& v : ref) {
    if (v.isTensor()) ref_tensors.push_back(v.toTensor());
  }
  Rule rule = ForwardRule(callp->name, callp->args, ref_tensors);
  std::vector<c10::IValue> abs;
  if (rule.scale == ReplayScale::kAbsInputs) abs = run(Mode::kAbs);
  std::optional<std::vector<c10::IValue>> cpu = CpuRun(*callp, run);
  if (ref.size() != recorded->size()) {
    ReplayCheck c = base;
    c.op = callp->name;
    c.verdict = ReplayVerdict::kNotReplayable;
    c.reason = "the replay gives " + std::to_string(ref.size()) +
               " outputs, the dump records " + std::to_string(recorded->size());
    out->push_back(std::move(c));
    return;
  }
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!(*recorded)[i]) continue;
    ReplayCheck c = base;
    c.op = callp->name;
    c.tensor = "output." + std::to_string(i);
    const at::Tensor& rec = *(*recorded)[i];
    c.dtype = std::string(TorchDTypeName(
        FromScalarType(rec.scalar_type()).value_or(DType::kFloat32)));
    if (!ref[i].isTensor()) {
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason =
          "the replay's output " + std::to_string(i) + " is not a tensor";
    } else {
      const at::Tensor* a =
          i < abs.size() && abs[i].isTensor() ? &abs[i].toTensor() : nullptr;
      const at::Tensor* cp = cpu && i < cpu->size() && (*cpu)[i].isTensor()
                                 ? &(*cpu)[i].toTensor()
                                 : nullptr;
      Check(rec, ref[i].toTensor(), a, cp, rule, false, &c);
    }
    out->push_back(std::move(c));
  }
  if (out->empty()) {
    ReplayCheck c = base;
    c.op = callp->name;
    c.verdict = ReplayVerdict::kNotReplayable;
    c.reason =
        "its outputs are not tensors, or none was saved: nothing "
        "to compare";
    out->push_back(std::move(c));
  }
}

}  // namespace lockstep::replay
