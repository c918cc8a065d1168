// The shadow task's check of one call and its records in dump.json.
#include "torch/shadow.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <cmath>
#include <string>

#include "torch/replay_internal.h"

namespace lockstep {
namespace {

// A value as the CPU replay takes it: tensors on the CPU, devices the CPU.
c10::IValue OnCpu(const c10::IValue& v) {
  if (v.isDevice()) return c10::Device(c10::kCPU);
  return replay::MapTensors(v, [](const at::Tensor& t) {
    return t.defined() ? t.detach().cpu() : t;
  });
}

// The thread's dispatch state as a fresh thread has it: no autocast, no
// mode keys a test or Python installed (they would change the replay).
c10::impl::PODLocalDispatchKeySet DefaultDispatchKeys() {
  c10::impl::PODLocalDispatchKeySet keys;
  keys.set_included(c10::default_included_set);
  keys.set_excluded(c10::default_excluded_set);
  return keys;
}

std::vector<ReplayCheck> NotReplayable(std::string op, std::string reason) {
  ReplayCheck c;
  c.op = std::move(op);
  c.verdict = ReplayVerdict::kNotReplayable;
  c.reason = std::move(reason);
  return {std::move(c)};
}

std::vector<ReplayCheck> CheckOnCpu(const c10::OperatorHandle& op,
                                    const std::vector<c10::IValue>& inputs,
                                    const std::vector<c10::IValue>& outputs) {
  replay::BoundCall call{op, replay::FullName(op.operator_name()), {}};
  if (inputs.size() != op.schema().arguments().size()) {
    return NotReplayable(call.name, "the call's " +
                                        std::to_string(inputs.size()) +
                                        " inputs do not follow its schema");
  }
  for (const c10::IValue& v : inputs) call.args.push_back(OnCpu(v));
  std::vector<c10::IValue> flat;
  for (const c10::IValue& v : outputs) replay::FlattenResult(v, &flat);
  std::vector<std::optional<at::Tensor>> recorded;
  double recorded_bytes = 0;
  for (const c10::IValue& v : flat) {
    if (v.isTensor() && v.toTensor().defined()) {
      recorded.emplace_back(v.toTensor().detach().cpu());
      recorded_bytes += 8.0 * static_cast<double>(v.toTensor().numel());
    } else {
      recorded.emplace_back();
    }
  }
  // The rules of lockstep replay: its allowlist, geometry and budget.
  if (std::string r =
          replay::AdmitCall(&call, recorded_bytes, replay::CallLimits());
      !r.empty()) {
    return NotReplayable(call.name, std::move(r));
  }
  std::vector<ReplayCheck> out;
  replay::CheckForward(call, recorded, ReplayCheck(), &out);
  return out;
}

}  // namespace

std::optional<c10::OperatorHandle> ShadowOperator(
    const at::RecordFunction& fn) {
  c10::optional<c10::OperatorName> name = fn.operator_name();
  if (!name) return std::nullopt;
  c10::optional<c10::OperatorHandle> op =
      c10::Dispatcher::singleton().findSchema(*name);
  if (!op) return std::nullopt;
  return *op;
}

std::vector<c10::IValue> HoldInputs(const at::RecordFunction& fn,
                                    const c10::OperatorHandle* op) {
  c10::ArrayRef<const c10::IValue> in = fn.inputs();
  const std::vector<c10::Argument>* args =
      op != nullptr ? &op->schema().arguments() : nullptr;
  bool in_place = std::string_view(fn.name()).ends_with('_');
  at::NoGradGuard no_grad;
  std::vector<c10::IValue> held;
  held.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const c10::IValue& v = in[i];
    bool written = args != nullptr && i < args->size()
                       ? (*args)[i].alias_info() != nullptr &&
                             (*args)[i].alias_info()->isWrite()
                       : in_place;
    if (written && v.isTensor() && v.toTensor().defined()) {
      held.emplace_back(v.toTensor().clone());
    } else if (written && v.isTensorList()) {
      c10::List<at::Tensor> copies;
      for (const at::Tensor& t : v.toTensorList()) copies.push_back(t.clone());
      held.emplace_back(std::move(copies));
    } else {
      held.push_back(v);
    }
  }
  return held;
}

std::vector<ReplayCheck> ShadowCheck(const c10::OperatorHandle* op,
                                     const std::vector<c10::IValue>& inputs,
                                     const std::vector<c10::IValue>& outputs) {
  if (op == nullptr) {
    return NotReplayable("", "no ATen schema: not an operator call");
  }
  at::DisableRecordFunctionGuard not_observed;
  at::NoGradGuard no_grad;
  c10::impl::ForceDispatchKeyGuard plain(DefaultDispatchKeys());
  try {
    return CheckOnCpu(*op, inputs, outputs);
  } catch (const replay::CallRefused& e) {
    return NotReplayable(e.op(), e.what());
  } catch (const c10::Error& e) {
    return NotReplayable(op->schema().name(),
                         "LibTorch refused the replayed call: " +
                             replay::FirstLine(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    return NotReplayable(
        op->schema().name(),
        "LibTorch refused the replayed call: " + replay::FirstLine(e.what()));
  } catch (...) {
    return NotReplayable(op->schema().name(),
                         "the replayed call threw an unknown exception");
  }
}

void WriteShadowList(const std::vector<ReplayCheck>& checks, PyJsonBuilder* b) {
  b->BeginList();
  for (const ReplayCheck& c : checks) {
    b->BeginDict();
    if (!c.tensor.empty()) b->Key("tensor").Str(c.tensor);
    bool measured =
        c.verdict == ReplayVerdict::kOk || c.verdict == ReplayVerdict::kSuspect;
    if (measured) {
      b->Key("dtype").Str(c.dtype);
      b->Key("max_ulp").Float(c.max_ulp);
      b->Key("max_rel").Float(c.max_rel);
      b->Key("cpu_ulp").Float(c.cpu_ulp);
      b->Key("bound").Float(c.bound);
      b->Key("bound_rule").Str(c.bound_rule);
      b->Key("kind").Str(c.kind);
      b->Key("index").Int(c.worst_index);
      b->Key("recorded").Float(c.recorded);
      b->Key("reference").Float(c.reference);
    }
    b->Key("verdict").Str(ReplayVerdictName(c.verdict));
    b->Key("reason").Str(c.reason);
    b->EndDict();
  }
  b->EndList();
}

std::vector<ReplayCheck> ReadShadowList(const PyValue& list,
                                        const ReplayCheck& base) {
  std::vector<ReplayCheck> out;
  auto str = [](const PyValue& r, const char* key) {
    const PyValue* v = r.Find(key);
    return v != nullptr && v->kind() == PyValue::Kind::kStr ? v->as_str()
                                                            : std::string();
  };
  auto num = [](const PyValue& r, const char* key, double none) {
    const PyValue* v = r.Find(key);
    return v != nullptr && v->is_number() ? v->as_double() : none;
  };
  for (const PyValue& r : list.items()) {
    ReplayCheck c = base;
    std::string verdict = str(r, "verdict");
    bool known = false;
    for (ReplayVerdict v :
         {ReplayVerdict::kOk, ReplayVerdict::kSuspect,
          ReplayVerdict::kNotReplayable, ReplayVerdict::kSkipped}) {
      if (verdict == ReplayVerdictName(v)) {
        c.verdict = v;
        known = true;
      }
    }
    if (r.kind() != PyValue::Kind::kDict || !known) {
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason = "unreadable shadow record: " + r.PyRepr().substr(0, 80);
      out.push_back(std::move(c));
      continue;
    }
    c.tensor = str(r, "tensor");
    c.dtype = str(r, "dtype");
    c.kind = str(r, "kind");
    c.max_ulp = num(r, "max_ulp", 0);
    c.max_rel = num(r, "max_rel", 0);
    c.cpu_ulp = num(r, "cpu_ulp", std::nan(""));
    c.bound = num(r, "bound", 0);
    c.bound_rule = str(r, "bound_rule");
    c.worst_index = static_cast<int64_t>(num(r, "index", -1));
    c.recorded = num(r, "recorded", 0);
    c.reference = num(r, "reference", 0);
    c.reason = str(r, "reason");
    out.push_back(std::move(c));
  }
  if (list.kind() != PyValue::Kind::kList || out.empty()) {
    ReplayCheck c = base;
    c.verdict = ReplayVerdict::kNotReplayable;
    c.reason = "its \"shadow\" list is empty or not a list";
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace lockstep
