// The RecordFunction callbacks and the autograd hook of the probe.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "torch/probe_impl.h"
#include "torch/replay_internal.h"

namespace lockstep {
namespace {

// Nesting depth of RecordFunction scopes on this thread, plus the probe's
// own work (ProbeOwnWork): only an operator called at depth 0 is an entry.
thread_local int t_depth = 0;
// ProbeOwnWork nesting: the operators it runs are not the entry's own.
thread_local int t_own = 0;

// The operators an entry calls are never entries. Turning RecordFunction
// off until the entry ends spares their callbacks and the boxing of their
// inputs, but each change of that state costs ~0.5 us (LibTorch 1.13
// rebuilds the thread's callback list): it is worth it only for operators
// that call others. So each operator name is watched once with
// RecordFunction on; those seen to call none (the elementwise operators of
// an optimizer) stay so, the others turn it off from then on.
enum class Calls : uint8_t { kNone, kSome };
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>()(s);
  }
};
thread_local std::unordered_map<std::string, Calls, NameHash, std::equal_to<>>
    t_calls;
// The outermost operator: whether its start turned RecordFunction off (its
// end turns it on again), else what it is known to call and how many
// operators it called (not the probe's own).
thread_local bool t_inner_off = false;
thread_local Calls* t_watched = nullptr;
thread_local int t_inner_calls = 0;

// The autograd engine runs each node of a backward pass in a scope of its
// own ("autograd::engine::evaluate_function: AccumulateGrad"), and the
// hooks of the node inside it: DDP's reducer launches its bucketed
// all_reduce from a gradient accumulator's hook. Such an outermost engine
// scope is transparent: what it calls starts at depth 1 = t_base, and of
// those only collectives are entries (the node's kernels, the gradient
// sums of the engine and the operators of a user's hook are not: msprobe
// sees none of them either).
thread_local int t_base = 0;

// PauseProbeOnThisThread's nesting.
thread_local int t_paused = 0;

// The Python API call open on this thread (BeginPythonApiCall): its name,
// whether it is dumped, and how many operators it called at the top level.
thread_local bool t_py_open = false;
thread_local bool t_py_dump = false;
thread_local int t_py_ops = 0;
thread_local std::string t_py_api;
thread_local std::string t_py_args;  // WritePythonArgs' layout

bool EngineScope(std::string_view name) {
  return name.starts_with("autograd::engine::evaluate_function");
}

std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
  int depth = t_depth++;
  if (depth == 0 && EngineScope(fn.name())) {
    t_base = 1;
    return nullptr;
  }
  if (depth > t_base) {
    if (t_own == 0) ++t_inner_calls;
    return nullptr;
  }
  t_inner_calls = 0;
  t_watched = nullptr;
  if (at::isRecordFunctionEnabled()) {
    std::string_view name = fn.name();
    auto it = t_calls.find(name);
    if (it == t_calls.end()) {
      it = t_calls.emplace(std::string(name), Calls::kNone).first;
    }
    if (it->second == Calls::kNone) {
      t_watched = &it->second;
    } else {
      at::enableRecordFunction(false);
      t_inner_off = true;
    }
  }
  if (fn.scope() != at::RecordScope::FUNCTION || t_paused > 0) return nullptr;
  std::string_view name = fn.name();
  if (t_base > 0 && !name.starts_with("c10d::"))
    return nullptr;  // in the engine's scope: collectives only
  std::string_view api;
  std::string_view args;
  if (t_py_open && t_base == 0 && !name.starts_with("lockstep::")) {
    if (++t_py_ops > 1 || !t_py_dump) return nullptr;
    api = t_py_api;
    args = t_py_args;
  }
  ProbeImpl* p = g_active_probe.load(std::memory_order_acquire);
  if (p == nullptr) return nullptr;
  return p->OpStart(fn, api, args);
}

void OnEnd(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  // The depth stays raised while OpEnd runs (its operators are not entries).
  if (ctx != nullptr) {
    ProbeImpl* p = g_active_probe.load(std::memory_order_acquire);
    if (p != nullptr) p->OpEnd(fn, static_cast<OpContext*>(ctx));
  }
  if (t_depth > 0) --t_depth;
  if (t_depth == 0 && t_base > 0) {  // the engine's scope ends
    t_base = 0;
    return;
  }
  if (t_depth != t_base) return;
  if (t_inner_off) {
    at::enableRecordFunction(true);
    t_inner_off = false;
  } else if (t_watched != nullptr && t_inner_calls > 0) {
    *t_watched = Calls::kSome;
  }
  t_watched = nullptr;
}

// "aten::add.Tensor": the operator and overload of a call ("" for none).
std::string AtenName(const at::RecordFunction& fn) {
  c10::optional<c10::OperatorName> op = fn.operator_name();
  return op ? replay::FullName(*op) : "";
}

}  // namespace

std::atomic<ProbeImpl*> g_active_probe{nullptr};

void ResetProbeDepth() {
  t_depth = 0;
  t_base = 0;
  t_paused = 0;
  t_own = 0;
  if (t_inner_off) at::enableRecordFunction(true);
  t_inner_off = false;
  t_watched = nullptr;
  t_py_open = false;
}

void PauseProbeOnThisThread(bool paused) {
  if (paused) {
    ++t_paused;
  } else if (t_paused > 0) {
    --t_paused;
  }
}

void BeginPythonApiCall(std::string_view api, bool dump,
                        std::string_view args) {
  t_py_open = true;
  t_py_dump = dump && !api.empty();
  t_py_ops = 0;
  t_py_api.assign(api);
  t_py_args.assign(args);
}

int EndPythonApiCall() {
  t_py_open = false;
  return t_py_ops;
}

ProbeOwnWork::ProbeOwnWork() {
  ++t_depth;
  ++t_own;
}
ProbeOwnWork::~ProbeOwnWork() {
  --t_own;
  --t_depth;
}

const std::vector<bool>& ProbeImpl::DtypeArgs(const at::RecordFunction& fn,
                                              const std::string& aten) {
  static const std::vector<bool> kNone;
  c10::ArrayRef<const c10::IValue> in = fn.inputs();
  if (std::none_of(in.begin(), in.end(),
                   [](const c10::IValue& v) { return v.isInt(); })) {
    return kNone;
  }
  auto [it, fresh] =
      dtype_args_.try_emplace(aten.empty() ? AtenName(fn) : aten);
  if (fresh) {
    c10::optional<c10::FunctionSchema> schema = fn.operator_schema();
    if (schema) {
      for (const c10::Argument& a : schema->arguments()) {
        const c10::TypePtr& t = a.real_type();
        auto inner = t->cast<c10::OptionalType>();
        const c10::TypePtr& u = inner ? inner->getElementType() : t;
        it->second.push_back(u->kind() == c10::TypeKind::ScalarTypeType);
      }
    }
  }
  return it->second;
}

at::CallbackHandle AddProbeCallbacks() {
  return at::addGlobalCallback(
      at::RecordFunctionCallback(OnStart, OnEnd)
          .needsInputs(true)
          .needsOutputs(true)
          .scopes(
              {at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

std::unique_ptr<OpContext> ProbeImpl::OpStart(const at::RecordFunction& fn,
                                              std::string_view api,
                                              std::string_view python_args) {
  std::unique_ptr<OpContext> result = OpStartLocked(fn, api, python_args);
  if (result != nullptr && result->take_stack) {
    TakeStack(result->fwd);
  }
  return result;
}

std::unique_ptr<OpContext> ProbeImpl::OpStartLocked(
    const at::RecordFunction& fn, std::string_view python_api,
    std::string_view python_args) {
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ == nullptr || terminated_) return nullptr;
  std::unique_ptr<OpContext> result;
  Guarded(fn.name(), [&] {
    auto [it, fresh] = api_names_.try_emplace(fn.name());
    if (fresh) it->second = MsprobeApiName(fn.name());
    // A collective keeps its own name (its inputs and outputs are read
    // as a collective's).
    std::string api(python_api.empty() || it->second.starts_with("Distributed.")
                        ? std::string_view(it->second)
                        : python_api);
    if (api.empty()) return;
    std::string base = api + "." + std::to_string(api_calls_.Next(api));
    std::string fwd = base + ".forward";
    bool shadow = config_.task == ProbeTask::kShadow;
    std::string aten;
    if (config_.task == ProbeTask::kTensor || shadow) aten = AtenName(fn);
    if (!filter_.ForwardWanted(fwd, module_stack_, aten)) return;
    ProbeOwnWork no_recursion;
    auto ctx = std::make_unique<OpContext>();
    ctx->base = std::move(base);
    ctx->fwd = std::move(fwd);
    ctx->forward = config_.forward;
    if (config_.task == ProbeTask::kOverflow) {
      // Kept until the end callback shows whether the outputs overflow.
      ctx->held = HoldInputs(fn, nullptr);
    } else if (api.starts_with("Distributed.")) {
      ctx->collective = true;
      ctx->forward = true;
      CollectiveInputs(fn, ctx.get());
      ctx->take_stack = StackWanted(ctx->fwd);
      result = std::move(ctx);
      return;
    } else if (ctx->forward) {
      ctx->aten = std::move(aten);
      if (shadow && filter_.Sampled(ctx->base, step_)) {
        // Replayed at the end on the inputs as they are now.
        ctx->shadow = true;
        ctx->op = ShadowOperator(fn);
        ctx->held = HoldInputs(fn, ctx->op ? &*ctx->op : nullptr);
      }
      ctx->entry.BeginDict();
      ctx->kwargs_written =
          config_.input && !shadow && !python_args.empty() &&
          WritePythonArgs(python_args, fn.inputs(), ctx->fwd + ".input",
                          &summarizer_, &ctx->entry);
      if (!ctx->kwargs_written) {
        ctx->entry.Key("input_args");
        if (config_.input) {
          summarizer_.Args(fn.inputs(), DtypeArgs(fn, ctx->aten),
                           ctx->fwd + ".input", &ctx->entry);
        } else {
          ctx->entry.BeginList().EndList();
        }
      }
      ctx->take_stack = StackWanted(ctx->fwd);
    }
    if (config_.backward && config_.task != ProbeTask::kOverflow &&
        at::GradMode::is_enabled()) {
      ctx->backward = true;
      ctx->inputs = NoteCallInputs(fn.inputs());
    }
    result = std::move(ctx);
  });
  return result;
}

void ProbeImpl::OpEnd(const at::RecordFunction& fn, OpContext* ctx) {
  if (ctx->collective) WaitForCollective(fn);
  // The shadow replay outside mu_: other threads' calls need not wait for
  // it (it touches no probe state; ShadowCheck never throws).
  std::vector<ReplayCheck> shadow;
  if (ctx->shadow) {
    shadow =
        ShadowCheck(ctx->op ? &*ctx->op : nullptr, ctx->held, fn.outputs());
    ctx->held.clear();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ == nullptr || terminated_) return;
  ProbeOwnWork no_recursion;
  const std::string& fwd = ctx->fwd;
  Guarded(fwd, [&] {
    const std::vector<c10::IValue>& outs = fn.outputs();
    if (config_.task == ProbeTask::kOverflow) {
      bool overflow = false;
      PyJsonBuilder scratch;
      summarizer_.List(outs, fwd + ".output", &scratch, &overflow);
      if (!overflow) return;
      summarizer_.set_save(true);
      PyJsonBuilder& e = ctx->entry;
      e.BeginDict().Key("input_args");
      summarizer_.List(ctx->held, fwd + ".input", &e);
      e.Key("input_kwargs").BeginDict().EndDict().Key("output");
      summarizer_.List(outs, fwd + ".output", &e);
      e.EndDict();
      summarizer_.set_save(false);
      AddEntry(fwd, e.Take());
      if (++overflow_count_ >= config_.overflow_nums &&
          config_.overflow_nums != -1) {
        terminated_ = true;
      }
      return;
    }
    if (ctx->collective) {
      CollectiveOutputs(ctx);
      AddEntry(fwd, ctx->entry.EndDict().Take());
      return;
    }
    if (ctx->forward) {
      PyJsonBuilder& e = ctx->entry;
      if (!ctx->kwargs_written) e.Key("input_kwargs").BeginDict().EndDict();
      e.Key("output");
      ListIf(config_.output, outs, fwd + ".output", &e);
      if (!ctx->aten.empty() && !ctx->kwargs_written)
        e.Key("aten").Str(ctx->aten);
      if (ctx->shadow) WriteShadowList(shadow, &e.Key("shadow"));
      AddEntry(fwd, e.EndDict().Take());
    }
    if (ctx->backward) {
      HookCall(ctx->base + ".backward", ctx->inputs, outs);
    }
  });
}

}  // namespace lockstep
