// The RecordFunction callbacks and the autograd hook of the probe.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>

#include <unordered_set>

#include "torch/probe_impl.h"
#include "torch/replay_internal.h"

namespace lockstep {
namespace {

// Nesting depth of RecordFunction scopes on this thread: only the
// outermost operator of a call is an entry.
thread_local int t_depth = 0;
// Whether the outermost operator's start turned RecordFunction off on this
// thread (its end turns it on again).
thread_local bool t_inner_off = false;

std::unique_ptr<at::ObserverContext> OnStart(const at::RecordFunction& fn) {
  int depth = t_depth++;
  if (depth > 0) return nullptr;
  // The operators this one calls are never entries: with RecordFunction off
  // until it ends, LibTorch neither calls these callbacks for them nor boxes
  // their inputs (most of what a probe cost LibTorch).
  if (at::isRecordFunctionEnabled()) {
    at::enableRecordFunction(false);
    t_inner_off = true;
  }
  if (fn.scope() != at::RecordScope::FUNCTION) return nullptr;
  ProbeImpl* p = g_active_probe.load(std::memory_order_acquire);
  if (p == nullptr) return nullptr;
  return p->OpStart(fn);
}

void OnEnd(const at::RecordFunction& fn, at::ObserverContext* ctx) {
  if (t_depth > 0) --t_depth;
  if (ctx != nullptr) {
    ProbeImpl* p = g_active_probe.load(std::memory_order_acquire);
    if (p != nullptr) p->OpEnd(fn, static_cast<OpContext*>(ctx));
  }
  if (t_depth == 0 && t_inner_off) {
    at::enableRecordFunction(true);
    t_inner_off = false;
  }
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
  if (t_inner_off) at::enableRecordFunction(true);
  t_inner_off = false;
}

at::CallbackHandle AddProbeCallbacks() {
  return at::addGlobalCallback(
      at::RecordFunctionCallback(OnStart, OnEnd)
          .needsInputs(true)
          .needsOutputs(true)
          .scopes(
              {at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
}

std::unique_ptr<OpContext> ProbeImpl::OpStart(const at::RecordFunction& fn) {
  std::unique_ptr<OpContext> result = OpStartLocked(fn);
  if (result != nullptr && result->take_stack) {
    TakeStack(result->fwd);
  }
  return result;
}

std::unique_ptr<OpContext> ProbeImpl::OpStartLocked(
    const at::RecordFunction& fn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ == nullptr || terminated_) return nullptr;
  std::unique_ptr<OpContext> result;
  Guarded(fn.name(), [&] {
    auto [it, fresh] = api_names_.try_emplace(fn.name());
    if (fresh) it->second = MsprobeApiName(fn.name());
    const std::string& api = it->second;
    if (api.empty()) return;
    std::string base = api + "." + std::to_string(api_calls_.Next(api));
    std::string fwd = base + ".forward";
    bool shadow = config_.task == ProbeTask::kShadow;
    std::string aten;
    if (config_.task == ProbeTask::kTensor || shadow) aten = AtenName(fn);
    if (!filter_.ForwardWanted(fwd, module_stack_, aten)) return;
    at::DisableRecordFunctionGuard no_recursion;
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
      ctx->entry.BeginDict().Key("input_args");
      ListIf(config_.input, fn.inputs(), ctx->fwd + ".input", &ctx->entry);
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
  at::DisableRecordFunctionGuard no_recursion;
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
      CollectiveOutputs(fn, ctx);
      AddEntry(fwd, ctx->entry.EndDict().Take());
      return;
    }
    if (ctx->forward) {
      PyJsonBuilder& e = ctx->entry;
      e.Key("input_kwargs").BeginDict().EndDict().Key("output");
      ListIf(config_.output, outs, fwd + ".output", &e);
      if (!ctx->aten.empty()) e.Key("aten").Str(ctx->aten);
      if (ctx->shadow) WriteShadowList(shadow, &e.Key("shadow"));
      AddEntry(fwd, e.EndDict().Take());
    }
    if (ctx->backward) {
      HookCall(ctx->base + ".backward", ctx->inputs, fn.inputs(), outs);
    }
  });
}

}  // namespace lockstep
