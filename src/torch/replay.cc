#include "lockstep/torch/replay.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>

#include "lockstep/core/parallel.h"
#include "lockstep/format/discovery.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/rank_tensors.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/numerics/replay_error.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/replay_internal.h"

namespace lockstep {
namespace {

using replay::BoundCall;
using replay::FlattenRecorded;
using replay::IsRecordedTensor;
using replay::OpRule;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// How a replay run prepares the recorded arguments.
enum class Mode {
  kFloat64,   // floating tensors, dtypes and scalars in float64: the reference
  kAbs,       // the same on |inputs|: the scale of sums of products
  kRecorded,  // as recorded: LibTorch CPU's own result in the dtype
  kEmulated,  // fp16 computed in fp32 (LibTorch 1.13 CPU lacks fp16 kernels)
};

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

bool IsScalarTypeArg(const c10::Argument& a) {
  const c10::TypePtr& t = a.real_type();
  if (t->kind() == c10::TypeKind::ScalarTypeType) return true;
  return t->kind() == c10::TypeKind::OptionalType &&
         t->containedType(0)->kind() == c10::TypeKind::ScalarTypeType;
}

c10::IValue PrepareValue(const c10::IValue& v, const c10::Argument& a, Mode m) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    at::Tensor p = PrepareTensor(t, m);
    if (t.unsafeGetTensorImpl()->is_wrapped_number()) {
      p.unsafeGetTensorImpl()->set_wrapped_number(true);
    }
    return p;
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
  if (m == Mode::kAbs && v.isDouble()) return std::fabs(v.toDouble());
  return v;
}

// The call's results, flattened (tuples and tensor lists) as the dump
// records them.
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

std::vector<c10::IValue> Prepare(const BoundCall& call, Mode m) {
  const auto& params = call.op.schema().arguments();
  std::vector<c10::IValue> args;
  args.reserve(call.args.size());
  for (size_t i = 0; i < call.args.size(); ++i) {
    args.push_back(PrepareValue(call.args[i], params[i], m));
  }
  return args;
}

std::vector<c10::IValue> Call(const BoundCall& call,
                              std::vector<c10::IValue> args) {
  torch::jit::Stack stack(std::move(args));
  call.op.callBoxed(&stack);
  std::vector<c10::IValue> out;
  for (const c10::IValue& v : stack) FlattenResult(v, &out);
  return out;
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

std::string Shape(at::IntArrayRef s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

std::string Fmt(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

// What one recorded tensor is checked with.
struct Rule {
  ReplayOpKind kind = ReplayOpKind::kNormalization;
  double ulps = 0;
  ReplayScale scale = ReplayScale::kTensorMax;
  int64_t k = 1;
  std::string kind_name;
};

// Measures `recorded` against the float64 `reference` (and LibTorch CPU's
// `cpu`, the `abs` scale where given) and fills `c`'s numbers and verdict.
void Check(const at::Tensor& recorded, const at::Tensor& reference,
           const at::Tensor* abs, const at::Tensor* cpu, const Rule& rule,
           bool backward, ReplayCheck* c) {
  c->kind = rule.kind_name;
  std::optional<DType> dt = FromScalarType(recorded.scalar_type());
  if (recorded.sizes() != reference.sizes()) {
    c->verdict = ReplayVerdict::kNotReplayable;
    c->reason = "the replay gives shape " + Shape(reference.sizes()) +
                ", the dump records " + Shape(recorded.sizes());
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
                    Fmt(c->cpu_ulp) + " ulp; the table gives " + b.rule + ")";
  }
  if (e.nonfinite_mismatch > 0) {
    c->verdict = ReplayVerdict::kSuspect;
    c->reason = std::to_string(e.nonfinite_mismatch) +
                " elements are NaN or inf where the float64 replay is not "
                "(or the reverse)";
  } else if (c->max_ulp > c->bound) {
    c->verdict = ReplayVerdict::kSuspect;
    c->reason = Fmt(c->max_ulp) + " ulp > bound " + Fmt(c->bound) +
                " (element " + std::to_string(c->worst_index) + ": recorded " +
                Fmt(c->recorded) + ", float64 replay " + Fmt(c->reference) +
                ")";
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

// The work of one rank.
class RankReplay {
 public:
  RankReplay(const RankLayout& layout, int64_t step, const DumpFile& dump,
             RankTensors tensors)
      : layout_(layout),
        step_(step),
        dump_(dump),
        tensors_(std::move(tensors)) {
    for (size_t i = 0; i < dump_.entries.size(); ++i) {
      by_name_.emplace(dump_.entries[i].name, i);
    }
  }

  std::vector<ReplayCheck> Entry(size_t i, bool backward) {
    const DumpEntry& e = dump_.entries[i];
    std::vector<ReplayCheck> out;
    ReplayCheck base;
    base.step = step_;
    base.rank = layout_.rank;
    base.entry = e.name;
    auto whole = [&](ReplayVerdict v, std::string reason) {
      ReplayCheck c = base;
      c.verdict = v;
      c.reason = std::move(reason);
      out.push_back(std::move(c));
      return out;
    };
    bool is_fwd = e.name.ends_with(".forward");
    bool is_bwd = e.name.ends_with(".backward");
    if (e.name.starts_with("Module.") || (!is_fwd && !is_bwd)) {
      return whole(ReplayVerdict::kSkipped,
                   e.name.starts_with("Module.")
                       ? "module call: its operators are replayed one by one"
                       : "not an operator call");
    }
    if (is_bwd && !backward) {
      return whole(ReplayVerdict::kSkipped,
                   "backward entries not replayed "
                   "(--no-backward)");
    }
    if (dump_.task != "tensor" && dump_.task != "overflow_check") {
      return whole(ReplayVerdict::kNotReplayable,
                   "a " + (dump_.task.empty() ? "statistics" : dump_.task) +
                       " dump holds no tensors (replay needs task tensor)");
    }
    try {
      if (is_fwd) {
        Forward(e, base, &out);
      } else {
        Backward(e, base, &out);
      }
    } catch (const std::exception& ex) {
      out.clear();
      std::string what = ex.what();
      size_t nl = what.find('\n');
      if (nl != std::string::npos) what.resize(nl);
      return whole(ReplayVerdict::kNotReplayable,
                   "LibTorch refused the replayed call: " + what);
    }
    return out;
  }

  size_t size() const { return dump_.entries.size(); }

 private:
  replay::TensorLoader Loader() {
    return [this](const PyValue& dict) -> StatusOr<at::Tensor> {
      const PyValue* name = dict.Find("data_name");
      if (name == nullptr || name->kind() != PyValue::Kind::kStr) {
        return Status::NotFound("a tensor argument",
                                "has no data_name (its "
                                "tensor was not saved)");
      }
      std::string where;
      StatusOr<Tensor> t =
          tensors_.Read(name->as_str(), ReadTensorFile, &where);
      if (!t.ok()) return t.status();
      if (Status s = VerifyTensorCrc32(*t, where); !s.ok()) return s;
      return ToTorchTensor(*t);
    };
  }

  // Loads the recorded tensors of a list ("output", a backward's "input").
  StatusOr<std::vector<std::optional<at::Tensor>>> LoadList(
      const PyValue* list) {
    std::vector<std::optional<at::Tensor>> out;
    if (list == nullptr) return out;
    std::vector<const PyValue*> leaves;
    FlattenRecorded(*list, &leaves);
    replay::TensorLoader load = Loader();
    for (const PyValue* leaf : leaves) {
      if (!IsRecordedTensor(*leaf) || leaf->Find("data_name") == nullptr) {
        out.emplace_back();
        continue;
      }
      StatusOr<at::Tensor> t = load(*leaf);
      if (!t.ok()) return t.status();
      out.emplace_back(std::move(*t));
    }
    return out;
  }

  StatusOr<BoundCall> Bind(const DumpEntry& e) {
    return replay::BindCall(e.name, e.value, Loader());
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

  void Forward(const DumpEntry& e, const ReplayCheck& base,
               std::vector<ReplayCheck>* out) {
    StatusOr<BoundCall> call = Bind(e);
    if (!call.ok()) {
      ReplayCheck c = base;
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason = call.status().message();
      out->push_back(std::move(c));
      return;
    }
    if (std::string r = replay::RandomReason(call->name, call->args);
        !r.empty()) {
      ReplayCheck c = base;
      c.op = call->name;
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason = r;
      out->push_back(std::move(c));
      return;
    }
    StatusOr<std::vector<std::optional<at::Tensor>>> recorded =
        LoadList(e.value.Find("output"));
    if (!recorded.ok()) throw std::runtime_error(recorded.status().message());
    at::NoGradGuard no_grad;
    auto run = [&](Mode m) { return Call(*call, Prepare(*call, m)); };
    std::vector<c10::IValue> ref = run(Mode::kFloat64);
    std::vector<at::Tensor> ref_tensors;
    for (const c10::IValue& v : ref) {
      if (v.isTensor()) ref_tensors.push_back(v.toTensor());
    }
    Rule rule = ForwardRule(call->name, call->args, ref_tensors);
    std::vector<c10::IValue> abs;
    if (rule.scale == ReplayScale::kAbsInputs) abs = run(Mode::kAbs);
    std::optional<std::vector<c10::IValue>> cpu = CpuRun(*call, run);
    if (ref.size() != recorded->size()) {
      ReplayCheck c = base;
      c.op = call->name;
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason = "the replay gives " + std::to_string(ref.size()) +
                 " outputs, the dump records " +
                 std::to_string(recorded->size());
      out->push_back(std::move(c));
      return;
    }
    for (size_t i = 0; i < ref.size(); ++i) {
      if (!(*recorded)[i]) continue;
      ReplayCheck c = base;
      c.op = call->name;
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
      c.op = call->name;
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason =
          "its outputs are not tensors, or none was saved: nothing "
          "to compare";
      out->push_back(std::move(c));
    }
  }

  void Backward(const DumpEntry& e, const ReplayCheck& base,
                std::vector<ReplayCheck>* out) {
    auto fail = [&](std::string op, std::string reason) {
      ReplayCheck c = base;
      c.op = std::move(op);
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason = std::move(reason);
      out->push_back(std::move(c));
    };
    std::string fwd_name =
        e.name.substr(0, e.name.size() - std::string(".backward").size()) +
        ".forward";
    auto it = by_name_.find(fwd_name);
    if (it == by_name_.end()) {
      return fail("", "its forward entry " + fwd_name + " is not in the dump");
    }
    StatusOr<BoundCall> call = Bind(dump_.entries[it->second]);
    if (!call.ok()) {
      return fail(
          "", "its forward call cannot be rebuilt: " + call.status().message());
    }
    if (std::string r = replay::RandomReason(call->name, call->args);
        !r.empty()) {
      return fail(call->name, r);
    }
    StatusOr<std::vector<std::optional<at::Tensor>>> grad_out =
        LoadList(e.value.Find("input"));
    if (!grad_out.ok()) throw std::runtime_error(grad_out.status().message());
    StatusOr<std::vector<std::optional<at::Tensor>>> grad_in =
        LoadList(e.value.Find("output"));
    if (!grad_in.ok()) throw std::runtime_error(grad_in.status().message());
    // msprobe records the gradients of the autograd node that made the
    // output: for an operator that decomposes into others, an inner node's.
    bool lockstep_dump =
        dump_.entries[it->second].value.Find("aten") != nullptr;
    if (!lockstep_dump && call->op.hasKernelForDispatchKey(
                              c10::DispatchKey::CompositeImplicitAutograd)) {
      return fail(call->name, call->name +
                                  " decomposes into other operators: msprobe "
                                  "records the gradients of the last of them, "
                                  "not of the call's inputs");
    }
    for (const c10::IValue& v : call->args) {
      if (v.isTensorList() ||
          (v.isList() && !v.toList().empty() && v.toList().get(0).isTensor())) {
        return fail(call->name,
                    "the backward of a call with a tensor-list argument is "
                    "not replayed");
      }
    }
    std::vector<at::Tensor*> inputs = TensorInputs(&call->args, !lockstep_dump);
    // msprobe writes null for a non-tensor argument of the node (x / 2.0:
    // [grad, null]).
    while (!lockstep_dump && grad_in->size() > inputs.size() &&
           !grad_in->back()) {
      grad_in->pop_back();
    }
    if (grad_in->size() != inputs.size()) {
      return fail(call->name,
                  "the dump records " + std::to_string(grad_in->size()) +
                      " input gradients for " + std::to_string(inputs.size()) +
                      " tensor inputs (msprobe records the autograd node's "
                      "inputs, not the call's)");
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if ((*grad_in)[i] && (*grad_in)[i]->sizes() != inputs[i]->sizes()) {
        return fail(call->name,
                    "input gradient " + std::to_string(i) + " has shape " +
                        Shape((*grad_in)[i]->sizes()) + ", input " +
                        std::to_string(i) + " " + Shape(inputs[i]->sizes()) +
                        " (msprobe records the autograd node's inputs, not "
                        "the call's)");
      }
    }
    // One run: forward with leaves, then the vector-Jacobian product.
    auto run = [&](Mode m) -> std::vector<c10::IValue> {
      at::AutoGradMode grad_mode(true);
      std::vector<c10::IValue> args = Prepare(*call, m);
      std::vector<at::Tensor> leaves;
      std::vector<size_t> leaf_of;
      size_t ti = 0;
      for (c10::IValue& v : args) {
        if (!v.isTensor() ||
            v.toTensor().unsafeGetTensorImpl()->is_wrapped_number() ||
            (!lockstep_dump && !v.toTensor().is_floating_point())) {
          continue;
        }
        size_t i = ti++;
        at::Tensor t = v.toTensor();
        if ((*grad_in)[i] && t.is_floating_point()) {
          at::Tensor leaf = t.detach().requires_grad_(true);
          leaves.push_back(leaf);
          leaf_of.push_back(i);
          v = leaf.clone();  // in-place ops may write into it
        }
      }
      std::vector<c10::IValue> outs = Call(*call, std::move(args));
      std::vector<at::Tensor> ys, gs;
      for (size_t j = 0; j < outs.size() && j < grad_out->size(); ++j) {
        if (!outs[j].isTensor() || !(*grad_out)[j]) continue;
        const at::Tensor& y = outs[j].toTensor();
        if (!y.requires_grad()) continue;
        at::Tensor g = PrepareTensor(*(*grad_out)[j], m).to(y.scalar_type());
        ys.push_back(y);
        gs.push_back(g);
      }
      std::vector<c10::IValue> result(inputs.size());
      if (ys.empty() || leaves.empty()) return result;
      std::vector<at::Tensor> grads = torch::autograd::grad(
          ys, leaves, gs, /*retain_graph=*/false, /*create_graph=*/false,
          /*allow_unused=*/true);
      for (size_t l = 0; l < leaves.size(); ++l) {
        result[leaf_of[l]] =
            grads[l].defined() ? grads[l] : at::zeros_like(leaves[l]);
      }
      return result;
    };
    std::vector<c10::IValue> ref = run(Mode::kFloat64);
    std::vector<at::Tensor> outs_for_rule;
    Rule fwd = ForwardRule(call->name, call->args, outs_for_rule);
    int64_t grad_numel = 0;
    for (const auto& g : *grad_out) {
      if (g) grad_numel += g->numel();
    }
    std::vector<c10::IValue> abs = run(Mode::kAbs);
    std::optional<std::vector<c10::IValue>> cpu = CpuRun(*call, run);
    bool any = false;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!(*grad_in)[i]) continue;
      ReplayCheck c = base;
      c.op = call->name;
      c.tensor = "output." + std::to_string(i);
      const at::Tensor& rec = *(*grad_in)[i];
      c.dtype = std::string(TorchDTypeName(
          FromScalarType(rec.scalar_type()).value_or(DType::kFloat32)));
      any = true;
      if (!ref[i].isTensor()) {
        c.verdict = ReplayVerdict::kNotReplayable;
        c.reason = "no gradient flows to input " + std::to_string(i) +
                   " in the replay";
        out->push_back(std::move(c));
        continue;
      }
      Rule r = fwd;
      int64_t numel = std::max<int64_t>(rec.numel(), 1);
      int64_t k_bwd = std::max<int64_t>(1, grad_numel * fwd.k / numel);
      if (fwd.kind == ReplayOpKind::kNormalization) {
        r.scale = ReplayScale::kTensorMax;
      } else if (fwd.kind == ReplayOpKind::kAccumulation || k_bwd > 1) {
        r.kind = ReplayOpKind::kAccumulation;
        r.scale = ReplayScale::kAbsInputs;
        r.k = k_bwd;
        if (fwd.kind != ReplayOpKind::kAccumulation) r.kind_name += ", summed";
      }
      const at::Tensor* a =
          i < abs.size() && abs[i].isTensor() ? &abs[i].toTensor() : nullptr;
      const at::Tensor* cp = cpu && i < cpu->size() && (*cpu)[i].isTensor()
                                 ? &(*cpu)[i].toTensor()
                                 : nullptr;
      Check(rec, ref[i].toTensor(), a, cp, r, true, &c);
      out->push_back(std::move(c));
    }
    if (!any) fail(call->name, "the dump saved none of its input gradients");
  }

  RankLayout layout_;
  int64_t step_;
  const DumpFile& dump_;
  RankTensors tensors_;
  std::map<std::string, size_t> by_name_;
};

bool Wanted(const std::vector<int64_t>& list, int64_t v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

}  // namespace

StatusOr<ReplayResult> ReplayDump(const ReplayOptions& options) {
  StatusOr<DumpLayout> layout = DiscoverDump(options.dump);
  if (!layout.ok()) return layout.status();
  ReplayResult result;
  result.dump = options.dump;
  result.warnings = layout->warnings;
  struct Work {
    int64_t step;
    RankLayout rank;
    DumpFile dump;
  };
  std::vector<Work> work;
  for (const StepLayout& s : layout->steps) {
    if (!Wanted(options.steps, s.step)) continue;
    for (const RankLayout& r : s.ranks) {
      if (!Wanted(options.ranks, r.rank)) continue;
      StatusOr<DumpFile> d = ReadDumpJson(r.dump_json);
      if (!d.ok()) return d.status();
      work.push_back({s.step, r, std::move(*d)});
    }
  }
  if (work.empty()) {
    return Status::NotFound(options.dump,
                            "no step and rank selected by --step/--rank");
  }
  size_t total = 0;
  for (const Work& w : work) total += w.dump.entries.size();
  std::atomic<size_t> done{0};
  std::mutex progress_mu;
  int jobs = std::max(1, options.jobs);
  for (Work& w : work) {
    RankReplay rr(w.rank, w.step, w.dump, RankTensors::Open(w.rank.dir));
    std::vector<std::vector<ReplayCheck>> per(rr.size());
    ParallelFor(rr.size(), jobs, [&](size_t i) {
      per[i] = rr.Entry(i, options.backward);
      size_t d = ++done;
      if (options.progress) {
        std::lock_guard<std::mutex> lock(progress_mu);
        options.progress(d, total);
      }
    });
    for (std::vector<ReplayCheck>& checks : per) {
      ++result.entries;
      bool replayed = false, not_replayable = false, skipped = false;
      for (ReplayCheck& c : checks) {
        switch (c.verdict) {
          case ReplayVerdict::kOk:
            replayed = true;
            break;
          case ReplayVerdict::kSuspect:
            replayed = true;
            ++result.suspect;
            if (!result.first_suspect) {
              result.first_suspect = result.checks.size();
            }
            break;
          case ReplayVerdict::kNotReplayable:
            not_replayable = true;
            break;
          case ReplayVerdict::kSkipped:
            skipped = true;
            break;
        }
        result.checks.push_back(std::move(c));
      }
      if (replayed) {
        ++result.replayed;
      } else if (not_replayable) {
        ++result.not_replayable;
      } else if (skipped) {
        ++result.skipped;
      }
    }
  }
  return result;
}

}  // namespace lockstep
