// Level L0/mix: module entries (ModuleScope) and parameter gradients.
#include <ATen/ATen.h>

#include "torch/probe_impl.h"

namespace lockstep {
namespace {

void WalkModules(
    const torch::nn::Module& m, const std::string& path,
    std::vector<std::pair<std::string, const torch::nn::Module*>>* out) {
  out->emplace_back(path, &m);
  for (const auto& child : m.named_children()) {
    std::string p = path.empty() ? child.key() : path + "." + child.key();
    WalkModules(*child.value(), p, out);
  }
}

}  // namespace

std::string ProbeImpl::ModulePath(const torch::nn::Module& m) const {
  auto it = module_paths_.find(&m);
  return it == module_paths_.end() ? "" : it->second;
}

void ProbeImpl::RegisterModel(const torch::nn::Module& root) {
  std::vector<std::pair<std::string, const torch::nn::Module*>> modules;
  WalkModules(root, "", &modules);
  std::lock_guard<std::mutex> lock(mu_);
  root_ = &root;
  for (const auto& [path, m] : modules) module_paths_[m] = path;
  if (!level_has_modules()) return;
  RemoveParamHooks();  // registering again replaces the hooks
  for (const auto& [path, m] : modules) {
    std::vector<std::string> names;
    std::vector<at::Tensor> params;
    for (const auto& p : m->named_parameters(/*recurse=*/false)) {
      names.push_back(p.key());
      params.push_back(p.value());
    }
    AddParamGroup(MsprobeModuleName(path, m->name()), names, params);
  }
}

void ProbeImpl::RegisterParameters(const std::string& module,
                                   const std::vector<std::string>& names,
                                   const std::vector<at::Tensor>& params) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!level_has_modules()) return;
  AddParamGroup(module, names, params);
}

void ProbeImpl::ClearParameters() {
  std::lock_guard<std::mutex> lock(mu_);
  RemoveParamHooks();
}

void ProbeImpl::AddParamGroup(const std::string& module,
                              const std::vector<std::string>& names,
                              const std::vector<at::Tensor>& all) {
  ParamGrads group;
  group.module = module;
  std::vector<at::Tensor> params;
  for (size_t i = 0; i < all.size() && i < names.size(); ++i) {
    if (!all[i].defined() || !all[i].requires_grad()) continue;
    group.names.push_back(names[i]);
    params.push_back(all[i]);
  }
  if (params.empty()) return;
  group.grads.resize(params.size());
  size_t g = param_groups_.size();
  param_groups_.push_back(std::move(group));
  for (size_t i = 0; i < params.size(); ++i) {
    // The hooks live until the probe dies or registers again (they are
    // removed then), so they need no session check: they record while
    // this probe is the active one, whether registration came before
    // Start (session_ not yet set) or after.
    unsigned h = params[i].register_hook([this, g, i](const at::Tensor& grad) {
      if (g_active_probe.load(std::memory_order_acquire) == this) {
        OnParamGrad(g, i, grad);
      }
    });
    param_hooks_.emplace_back(params[i], h);
  }
}

void ProbeImpl::RemoveParamHooks() {
  for (auto& [param, h] : param_hooks_) param.remove_hook(h);
  param_hooks_.clear();
  param_groups_.clear();
}

void ProbeImpl::OnParamGrad(size_t group, size_t index,
                            const at::Tensor& grad) {
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ == nullptr || terminated_ || !config_.backward) return;
  if (group >= param_groups_.size()) return;  // registered again meanwhile
  at::DisableRecordFunctionGuard no_recursion;
  ParamGrads& g = param_groups_[group];
  Guarded(g.module + ".parameters_grad", [&] {
    if (!g.grads[index].empty()) return;  // one per backward
    // The entry's number n is fixed when its first gradient arrives.
    if (g.arrived == 0) g.index = grad_calls_.Next(g.module);
    std::string name = g.module + ".parameters_grad." + std::to_string(g.index);
    PyJsonBuilder one;
    one.BeginList();
    summarizer_.Tensor(grad, name + "." + g.names[index], &one);
    g.grads[index] = one.EndList().Take();
    if (++g.arrived < g.grads.size()) return;
    PyJsonBuilder e(DumpWriter::kEntryLevel);
    e.BeginDict();
    for (size_t i = 0; i < g.names.size(); ++i) {
      e.Key(g.names[i]).Fragment(g.grads[i]);
    }
    e.EndDict();
    g.grads.assign(g.grads.size(), std::string());
    g.arrived = 0;
    AddEntry(std::move(name), e.Take());
  });
}

int64_t ProbeImpl::ModuleBegin(const torch::nn::Module& m,
                               const std::vector<at::Tensor>& inputs) {
  std::vector<std::pair<std::string, at::Tensor>> params;
  for (const auto& p : m.named_parameters(/*recurse=*/false)) {
    params.emplace_back(p.key(), p.value());
  }
  std::string module;
  {
    std::lock_guard<std::mutex> lock(mu_);
    module = MsprobeModuleName(ModulePath(m), m.name());
  }
  return ModuleBegin(module, inputs, params);
}

int64_t ProbeImpl::ModuleBegin(
    const std::string& module, const std::vector<at::Tensor>& inputs,
    const std::vector<std::pair<std::string, at::Tensor>>& params) {
  std::string stack_of;  // the entry whose stack is to be taken
  int64_t token = -1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (writer_ == nullptr || terminated_) return -1;
    at::DisableRecordFunctionGuard no_recursion;
    OpenModule open;
    open.name =
        module + ".forward." + std::to_string(module_calls_.Next(module));
    open.recorded = level_has_modules() && config_.forward &&
                    filter_.ForwardWanted(open.name, module_stack_);
    if (open.recorded) {
      Guarded(open.name, [&] {
        PyJsonBuilder b;
        ListIf(config_.input, inputs, open.name + ".input", &b);
        open.inputs = b.Take();
        b.BeginDict();
        for (const auto& [name, value] : params) {
          b.Key(name);
          summarizer_.Tensor(value, open.name + ".parameters." + name, &b);
        }
        open.params = b.EndDict().Take();
      });
      if (StackWanted(open.name)) stack_of = open.name;
    }
    module_stack_.push_back(open.name);
    if (open.recorded && config_.backward && at::GradMode::is_enabled()) {
      std::vector<c10::IValue> values(inputs.begin(), inputs.end());
      open.call_inputs = NoteCallInputs(
          c10::ArrayRef<const c10::IValue>(values.data(), values.size()));
      open.call_inputs.first_input.reset();  // a module is not a view call
      open.backward = true;
    }
    token = next_token_++;
    open_modules_[token] = std::move(open);
  }
  if (!stack_of.empty()) TakeStack(stack_of);
  return token;
}

void ProbeImpl::ModuleOutputs(int64_t token,
                              const std::vector<at::Tensor>& outputs) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_modules_.find(token);
  if (it == open_modules_.end() || !it->second.recorded) return;
  if (writer_ == nullptr || terminated_) return;
  at::DisableRecordFunctionGuard no_recursion;
  OpenModule& open = it->second;
  Guarded(open.name, [&] {
    PyJsonBuilder e(DumpWriter::kEntryLevel);
    e.BeginDict().Key("input_args").Fragment(open.inputs);
    e.Key("input_kwargs").BeginDict().EndDict().Key("output");
    ListIf(config_.output, outputs, open.name + ".output", &e);
    e.Key("parameters").Fragment(open.params).EndDict();
    // The parent of a module entry is the module around it.
    module_stack_.pop_back();
    AddEntry(open.name, e.Take());
    module_stack_.push_back(open.name);
    if (open.backward) {
      std::string name = open.name;
      name.replace(name.rfind(".forward."), 9, ".backward.");
      HookCall(name, open.call_inputs,
               std::vector<c10::IValue>(outputs.begin(), outputs.end()));
    }
  });
  open.call_inputs = CallInputs();
  open.recorded = false;
}

void ProbeImpl::ModuleEnd(int64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_modules_.find(token);
  if (it == open_modules_.end()) return;
  if (!module_stack_.empty() && module_stack_.back() == it->second.name) {
    module_stack_.pop_back();
  }
  open_modules_.erase(it);
}

int64_t Probe::BeginModuleCall(
    const std::string& module, const std::vector<at::Tensor>& inputs,
    const std::vector<std::pair<std::string, at::Tensor>>& params) {
  if (g_active_probe.load(std::memory_order_acquire) != impl_.get()) return -1;
  return impl_->ModuleBegin(module, inputs, params);
}

void Probe::EndModuleCall(int64_t token,
                          const std::vector<at::Tensor>& outputs) {
  if (token < 0) return;
  impl_->ModuleOutputs(token, outputs);
  impl_->ModuleEnd(token);
}

void Probe::RegisterParameters(const std::string& module,
                               const std::vector<std::string>& names,
                               const std::vector<at::Tensor>& params) {
  impl_->RegisterParameters(module, names, params);
}

void Probe::ClearParameters() { impl_->ClearParameters(); }

void ProbeImpl::Save(const std::string& name, const at::Tensor& value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ == nullptr || terminated_) return;
  at::DisableRecordFunctionGuard no_recursion;
  std::string entry =
      name + "." + std::to_string(debug_calls_.Next(name)) + ".debug";
  Guarded(entry, [&] {
    PyJsonBuilder e(DumpWriter::kEntryLevel);
    summarizer_.Tensor(value, entry, &e);
    AddEntry(std::move(entry), e.Take());
  });
}

void Probe::Save(const std::string& name, const at::Tensor& value) {
  if (g_active_probe.load(std::memory_order_acquire) != impl_.get()) return;
  impl_->Save(name, value);
}

ModuleScope::ModuleScope(Probe* probe, const torch::nn::Module& module,
                         const std::vector<at::Tensor>& inputs) {
  if (probe == nullptr) return;
  ProbeImpl* impl = probe->impl();
  if (g_active_probe.load(std::memory_order_acquire) != impl) return;
  token_ = impl->ModuleBegin(module, inputs);
  if (token_ >= 0) impl_ = impl;
}

void ModuleScope::SetOutputs(const std::vector<at::Tensor>& outputs) {
  if (impl_ != nullptr) impl_->ModuleOutputs(token_, outputs);
}

ModuleScope::~ModuleScope() {
  if (impl_ != nullptr) impl_->ModuleEnd(token_);
}

}  // namespace lockstep
