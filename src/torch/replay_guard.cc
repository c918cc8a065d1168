// What a replayed call must pass before and while it runs: the allowlist,
// sizes and strides inside their storage, and a memory budget checked
// against an estimate before the call and against every allocation during
// it (docs/replay.md#limits). Replay (forward and backward) and the shadow
// task admit their calls here, and Call (replay_check.cc) runs only
// admitted calls.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lockstep/format/tensor.h"
#include "torch/call_budget.h"
#include "torch/replay_internal.h"

namespace lockstep::replay {
namespace {

template <typename F>
void ForEachTensor(const c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    f(v.toTensor());
  } else if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorList()) f(t);
  } else if (v.isList()) {
    for (const c10::IValue& item : v.toList().vec()) ForEachTensor(item, f);
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) ForEachTensor(e, f);
  }
}

// Bytes of `t`'s elements in float64 (the reference run's dtype), or its
// own element size where larger; as a double, so that no size overflows.
double ReplayBytes(const at::Tensor& t) {
  double n = 1;
  for (int64_t s : t.sizes()) n *= static_cast<double>(s);
  return n * static_cast<double>(std::max<int64_t>(8, t.element_size()));
}

// The recorded call's argument as the float64 run takes it, on the meta
// device: shapes and dtypes only, no memory.
c10::IValue MetaValue(const c10::IValue& v, const c10::Argument& a) {
  auto meta = [](const at::Tensor& t) -> at::Tensor {
    if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) return t;
    at::ScalarType st = t.is_floating_point() ? at::kDouble : t.scalar_type();
    return at::empty(t.sizes(), at::TensorOptions(at::kMeta).dtype(st));
  };
  if (HoldsTensors(v)) return MapTensors(v, meta);
  if (v.isDevice() || (v.isNone() && a.name() == "device")) {
    return c10::Device(c10::kMeta);
  }
  const c10::TypePtr& type = a.real_type();
  bool dtype_arg =
      type->kind() == c10::TypeKind::ScalarTypeType ||
      (type->kind() == c10::TypeKind::OptionalType &&
       type->containedType(0)->kind() == c10::TypeKind::ScalarTypeType);
  if (v.isInt() && dtype_arg &&
      c10::isFloatingType(static_cast<c10::ScalarType>(v.toInt()))) {
    return static_cast<int64_t>(at::kDouble);
  }
  return v;
}

// The outputs' bytes from the operator's shape function (its meta kernel);
// nullopt where it has none (LibTorch 1.13 lacks many) or it would need
// memory.
std::optional<double> MetaOutputBytes(const BoundCall& call) {
  const auto& params = call.op.schema().arguments();
  try {
    torch::jit::Stack stack;
    for (size_t i = 0; i < call.args.size(); ++i) {
      stack.push_back(MetaValue(call.args[i], params[i]));
    }
    CallBudgetScope no_memory(int64_t{1} << 20);
    call.op.callBoxed(&stack);
    double bytes = 0;
    for (const c10::IValue& v : stack) {
      ForEachTensor(v, [&](const at::Tensor& t) {
        if (t.defined()) bytes += ReplayBytes(t);
      });
    }
    return bytes;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

const c10::IValue* Arg(const BoundCall& call, std::string_view name) {
  const auto& params = call.op.schema().arguments();
  for (size_t i = 0; i < params.size() && i < call.args.size(); ++i) {
    if (params[i].name() == name) return &call.args[i];
  }
  return nullptr;
}

// Element `d` of an int[] argument (one value stands for every dim).
double IntAt(const c10::IValue* v, size_t d, double none) {
  if (v == nullptr || !v->isIntList()) return none;
  std::vector<int64_t> xs = v->toIntVector();
  if (xs.empty()) return none;
  return static_cast<double>(xs[std::min(d, xs.size() - 1)]);
}

// The products of a convolution's spatial sizes: output, input, kernel.
// Per dim the output is (in + 2 pad - dil (k - 1) - 1) / stride + 1, or
// for a transposed one (in - 1) stride - 2 pad + dil (k - 1) +
// output_padding + 1.
struct ConvSpatial {
  double out = 1, in = 1, kernel = 1;
};
ConvSpatial SpatialSizes(const BoundCall& call, const at::Tensor& x,
                         const at::Tensor& k, bool transposed) {
  const c10::IValue* pad = Arg(call, "padding");
  bool same = pad != nullptr && pad->isString() && pad->toStringRef() == "same";
  int64_t spatial = k.dim() - 2;
  ConvSpatial c;
  for (int64_t d = 0; d < spatial; ++d) {
    auto i = static_cast<size_t>(d);
    double n = static_cast<double>(x.size(x.dim() - spatial + d));
    double ks = static_cast<double>(k.size(2 + d));
    double s = std::max(1.0, IntAt(Arg(call, "stride"), i, 1));
    double p = IntAt(pad, i, 0);
    double dil = IntAt(Arg(call, "dilation"), i, 1);
    double o = transposed ? (n - 1) * s - 2 * p + dil * (ks - 1) +
                                IntAt(Arg(call, "output_padding"), i, 0) + 1
               : same ? n
                      : std::floor((n + 2 * p - dil * (ks - 1) - 1) / s) + 1;
    c.out *= std::max(o, 0.0);
    c.in *= n;
    c.kernel *= ks;
  }
  return c;
}

// A convolution's output and im2col buffer in float64, from its arguments
// (LibTorch 1.13 has no meta kernel for convolutions).
std::optional<double> ConvBytes(const BoundCall& call) {
  const c10::IValue* in = Arg(call, "input");
  if (in == nullptr) in = Arg(call, "self");
  const c10::IValue* w = Arg(call, "weight");
  if (in == nullptr || w == nullptr || !in->isTensor() || !w->isTensor()) {
    return std::nullopt;
  }
  const at::Tensor& x = in->toTensor();
  const at::Tensor& k = w->toTensor();
  if (k.dim() < 3 || x.dim() < k.dim() - 1) return std::nullopt;
  const c10::IValue* tr = Arg(call, "transposed");
  bool transposed = (tr != nullptr && tr->isBool() && tr->toBool()) ||
                    call.name.find("conv_transpose") != std::string::npos;
  ConvSpatial sp = SpatialSizes(call, x, k, transposed);
  double batch = x.dim() > k.dim() - 1 ? static_cast<double>(x.size(0)) : 1;
  double groups = 1;
  if (const c10::IValue* g = Arg(call, "groups"); g != nullptr && g->isInt()) {
    groups = std::max<double>(1, static_cast<double>(g->toInt()));
  }
  // Weights: [out, in / groups, k...], transposed [in, out / groups, k...].
  double out_channels = static_cast<double>(k.size(transposed ? 1 : 0)) *
                        (transposed ? groups : 1);
  double out = batch * out_channels * sp.out;
  // im2col: (in_channels / groups) * kernel values per output position
  // (per input position for a transposed one, from the output channels).
  double columns =
      transposed ? batch * out_channels / groups * sp.kernel * sp.in
                 : batch * static_cast<double>(k.size(1)) * sp.kernel * sp.out;
  return (out + columns) * 8;
}

bool IsConvolution(const std::string& name) {
  const OpRule* rule = FindOpRule(name);
  return rule != nullptr && rule->terms == Terms::kConvWeight;
}

}  // namespace

bool HoldsTensors(const c10::IValue& v) {
  return v.isTensor() || v.isTensorList() ||
         (v.isList() &&
          v.toList().elementType()->kind() == c10::TypeKind::OptionalType);
}

c10::IValue MapTensors(const c10::IValue& v,
                       const std::function<at::Tensor(const at::Tensor&)>& f) {
  if (v.isTensor()) return f(v.toTensor());
  if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    for (const at::Tensor& t : v.toTensorList()) out.push_back(f(t));
    return out;
  }
  if (v.isList() &&
      v.toList().elementType()->kind() == c10::TypeKind::OptionalType) {
    c10::List<c10::optional<at::Tensor>> out;
    for (const c10::IValue& item : v.toList().vec()) {
      out.push_back(item.isTensor()
                        ? c10::optional<at::Tensor>(f(item.toTensor()))
                        : c10::nullopt);
    }
    return out;
  }
  return v;
}

std::string FormatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.3g %s", bytes,
                units[u]);
  return buf;
}

std::string GeometryProblem(const at::Tensor& t) {
  if (!t.defined()) return "";
  if (t.layout() != at::kStrided) return "a non-strided layout is not replayed";
  if (!t.has_storage()) return "it has no storage";
  int64_t offset = t.storage_offset();
  if (offset < 0) return "a negative storage offset";
  int64_t last = offset;  // element index of the furthest element
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) < 0 || t.stride(d) < 0) return "a negative size or stride";
    if (t.size(d) == 0) return "";  // no element is read
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t step = 0;
    if (__builtin_mul_overflow(t.size(d) - 1, t.stride(d), &step) ||
        __builtin_add_overflow(last, step, &last)) {
      return "sizes and strides that overflow";
    }
  }
  int64_t end = 0;
  if (__builtin_add_overflow(last, 1, &end) ||
      __builtin_mul_overflow(end, static_cast<int64_t>(t.element_size()),
                             &end)) {
    return "sizes and strides that overflow";
  }
  int64_t have = static_cast<int64_t>(t.storage().nbytes());
  if (end > have) {
    return "sizes " + ShapeToString(t.sizes().vec()) + ", strides " +
           ShapeToString(t.strides().vec()) + " and offset " +
           std::to_string(offset) + " reach byte " + std::to_string(end) +
           " of a " + std::to_string(have) + "-byte storage";
  }
  return "";
}

int64_t CallBudgetBytes(const BoundCall& call, double recorded_bytes,
                        const CallLimits& limits) {
  if (limits.max_bytes > 0) return limits.max_bytes;
  double io = recorded_bytes;
  for (const c10::IValue& v : call.args) {
    ForEachTensor(v, [&](const at::Tensor& t) {
      if (t.defined()) io += ReplayBytes(t);
    });
  }
  double b = std::max<double>(kMinCallBudget, kCallBudgetFactor * io);
  return static_cast<int64_t>(std::min(b, 9e18));
}

std::string BudgetRule(const CallLimits& limits) {
  if (limits.max_bytes > 0) return "--max-call-memory";
  return std::to_string(kCallBudgetFactor) +
         " x its tensors' bytes in float64, at least " +
         FormatBytes(kMinCallBudget) + "; --max-call-memory changes it";
}

std::string AdmitCall(BoundCall* call, double recorded_bytes,
                      const CallLimits& limits) {
  call->budget = 0;
  if (std::string r = RandomReason(call->name, call->args); !r.empty()) {
    return r;
  }
  if (std::string r = OffAllowlistReason(call->name); !r.empty()) return r;
  const auto& params = call->op.schema().arguments();
  for (size_t i = 0; i < call->args.size() && i < params.size(); ++i) {
    std::string problem;
    ForEachTensor(call->args[i], [&](const at::Tensor& t) {
      if (problem.empty()) problem = GeometryProblem(t);
    });
    if (!problem.empty()) {
      return "not replayed: argument " + params[i].name() + " has " + problem;
    }
  }
  int64_t budget = CallBudgetBytes(*call, recorded_bytes, limits);
  std::optional<double> need =
      IsConvolution(call->name) ? ConvBytes(*call) : MetaOutputBytes(*call);
  if (need && *need > static_cast<double>(budget)) {
    return "refused: its output" +
           std::string(IsConvolution(call->name) ? " and im2col buffer" : "") +
           " would take " + FormatBytes(*need) +
           " (estimated from its schema and arguments), past the call's "
           "memory budget of " +
           FormatBytes(static_cast<double>(budget)) + " (" +
           BudgetRule(limits) + ")";
  }
  call->budget = budget;
  return "";
}

void WithinBudget(const BoundCall& call, const std::function<void()>& fn) {
  if (call.budget <= 0) {
    throw CallRefused(call.name,
                      "refused: the call was not admitted (internal)");
  }
  CallBudgetScope scope(call.budget);
  try {
    fn();
  } catch (const std::exception&) {
    if (!scope.exceeded()) throw;
    throw CallRefused(
        call.name,
        "refused: it asked for " +
            FormatBytes(static_cast<double>(scope.refused_bytes())) +
            " more while running, past the call's memory budget of " +
            FormatBytes(static_cast<double>(scope.limit_bytes())) +
            " (--max-call-memory changes it)");
  }
}

}  // namespace lockstep::replay
