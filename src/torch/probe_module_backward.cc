// Level L0/mix: Module.<path>.<Class>.backward.<n> entries. "input" holds the
// gradients of the module call's outputs, "output" the gradients of its
// inputs (null for inputs that need none). The input side comes from a
// tensor hook on each input, so an input that other code also uses gets
// its total gradient there (docs/probe.md).
#include <ATen/ATen.h>

#include <atomic>

#include "torch/probe_impl.h"

namespace lockstep {
namespace {

std::atomic<int64_t> g_backward_ids{0};

bool NeedsGrad(const at::Tensor& t) { return t.defined() && t.requires_grad(); }

}  // namespace

void ProbeImpl::HookModuleBackward(const std::string& forward_name,
                                   const std::vector<at::Tensor>& inputs,
                                   const std::vector<at::Tensor>& outputs) {
  ModuleBackward b;
  b.name = forward_name;
  size_t at = b.name.rfind(".forward.");
  if (at == std::string::npos) return;
  b.name.replace(at, 9, ".backward.");
  b.grad_in.resize(inputs.size());
  b.grad_out.resize(outputs.size());
  for (const at::Tensor& t : outputs) b.out_wanted += NeedsGrad(t);
  if (b.out_wanted == 0) return;  // no backward will pass through
  for (const at::Tensor& t : inputs) b.in_wanted += NeedsGrad(t);
  int64_t id = ++g_backward_ids;
  module_backwards_[id] = std::move(b);
  auto hook = [this, id](bool output_side, size_t i) {
    return [this, id, output_side, i](const at::Tensor& grad) {
      if (g_active_probe.load(std::memory_order_acquire) == this) {
        OnModuleGrad(id, output_side, i, grad);
      }
    };
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (NeedsGrad(outputs[i])) outputs[i].register_hook(hook(true, i));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (NeedsGrad(inputs[i])) inputs[i].register_hook(hook(false, i));
  }
}

void ProbeImpl::OnModuleGrad(int64_t id, bool output_side, size_t index,
                             const at::Tensor& grad) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = module_backwards_.find(id);
  if (it == module_backwards_.end() || writer_ == nullptr || terminated_) {
    return;
  }
  at::DisableRecordFunctionGuard no_recursion;
  ModuleBackward& b = it->second;
  std::vector<std::string>& side = output_side ? b.grad_out : b.grad_in;
  if (index >= side.size() || !side[index].empty()) return;
  bool wanted = output_side ? config_.input : config_.output;
  std::string stem =
      b.name + (output_side ? ".input." : ".output.") + std::to_string(index);
  Guarded(stem, [&] {
    PyJsonBuilder one;
    if (wanted) {
      summarizer_.Tensor(grad, stem, &one);
    } else {
      one.Null();
    }
    side[index] = one.Take();
  });
  if (++b.arrived == b.in_wanted + b.out_wanted) FinishModuleBackward(id);
}

void ProbeImpl::FinishModuleBackward(int64_t id) {
  auto it = module_backwards_.find(id);
  ModuleBackward& b = it->second;
  PyJsonBuilder e(DumpWriter::kEntryLevel);
  e.BeginDict();
  for (const auto* side : {&b.grad_out, &b.grad_in}) {
    e.Key(side == &b.grad_out ? "input" : "output").BeginList();
    // Empty: the gradient never arrived.
    for (const std::string& g : *side) e.Fragment(g.empty() ? "null" : g);
    e.EndList();
  }
  AddEntry(b.name, e.EndDict().Take());
  module_backwards_.erase(it);
}

void ProbeImpl::FlushModuleBackwards() {
  // Backward passes cut by the end of the step: record what arrived.
  while (!module_backwards_.empty()) {
    auto it = module_backwards_.begin();
    if (it->second.arrived > 0) {
      FinishModuleBackward(it->first);
    } else {
      module_backwards_.erase(it);
    }
  }
}

}  // namespace lockstep
