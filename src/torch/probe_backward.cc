// Backward entries: each dumped call's own vector-Jacobian product
// (probe_backward.h says how it is found).
#include "torch/probe_backward.h"

#include <ATen/ATen.h>
#include <ATen/SequenceNumber.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/functions/tensor.h>
#include <torch/csrc/autograd/variable.h>

#include <optional>
#include <unordered_set>

#include "torch/probe_impl.h"

namespace lockstep {

using torch::autograd::Edge;
using torch::autograd::Node;
using torch::autograd::variable_list;

namespace {

bool SameEdge(const Edge& a, const Edge& b) {
  return a.function.get() == b.function.get() && a.input_nr == b.input_nr;
}

void NoteTensor(const at::Tensor& t, CallInputs* in) {
  bool grad = t.defined() && t.requires_grad();
  in->edges.push_back(grad ? torch::autograd::impl::gradient_edge(t) : Edge());
  Edge base;
  if (grad && t.is_view()) {
    base = torch::autograd::impl::gradient_edge(at::Tensor(t._base()));
  }
  in->base_edges.push_back(std::move(base));
}

// The gradient of a CopySlices node's view, from a gradient `g` of its
// base: the region the view covers, as the node itself slices it.
at::Tensor ViewRegion(const at::Tensor& g, const at::TensorGeometry& base,
                      const at::TensorGeometry& view) {
  if (!g.defined()) return g;
  at::Tensor b = g;
  if (g.strides() != base.strides() || g.storage_offset() != 0) {
    b = at::empty_strided(base.sizes(), base.strides(), g.options());
    b.copy_(g);
  }
  return b.as_strided(view.sizes(), view.strides(),
                      view.storage_offset() - base.storage_offset());
}

// Where a hook's gradient goes: gradient `from` of the node (an incoming
// one for output_side, else one it passes on) is output `to` (output_side)
// or tensor input `to` of the call; `slice`: it is a CopySlices node's base
// gradient, of which the call's tensor is the view's region.
struct HookTarget {
  uint32_t from = 0;
  uint32_t to = 0;
  bool slice = false;
};

// A view call whose output's node an in-place call on (a view of) that
// output bypassed: CopySlices passes the in-place call's gradient straight
// to the base. The view call's share is that gradient put into the region
// of the in-place call's view (zero elsewhere), seen through the view
// call's output and input geometry (all views of one base).
struct ViewChain {
  at::TensorGeometry in, out;
  uint32_t out_index = 0;
};

struct HookSite {
  ProbeImpl* probe;
  uint64_t session;
  int64_t step;
  int64_t call;
  bool output_side;  // the call's output gradients (the node's inputs)
  std::vector<HookTarget> targets;
  at::TensorGeometry base, view;  // for slice targets and chains
  std::optional<ViewChain> chain;

  void DeliverChain(ProbeImpl* p, const variable_list& grads) const {
    if (grads.empty() || !grads[0].defined()) return;
    at::Tensor z =
        at::empty_strided(base.sizes(), base.strides(), grads[0].options())
            .zero_();
    int64_t off = base.storage_offset();
    z.as_strided(view.sizes(), view.strides(), view.storage_offset() - off)
        .copy_(ViewRegion(grads[0], base, view));
    auto region = [&](const at::TensorGeometry& g) {
      return z.as_strided(g.sizes(), g.strides(), g.storage_offset() - off);
    };
    p->OnCallGrads(step, call, true, {{chain->out_index, region(chain->out)}});
    p->OnCallGrads(step, call, false, {{0, region(chain->in)}});
  }

  void Deliver(const variable_list& grads) const {
    ProbeImpl* p = g_active_probe.load(std::memory_order_acquire);
    if (p != probe || p->session() != session) return;
    // The slicing below must not be seen as operators of the run.
    at::DisableRecordFunctionGuard no_recursion;
    if (chain) return DeliverChain(p, grads);
    std::vector<std::pair<uint32_t, at::Tensor>> got;
    got.reserve(targets.size());
    for (const HookTarget& t : targets) {
      if (t.from >= grads.size()) continue;
      got.emplace_back(t.to, t.slice ? ViewRegion(grads[t.from], base, view)
                                     : grads[t.from]);
    }
    p->OnCallGrads(step, call, output_side, std::move(got));
  }
};

// A post-hook sees a node's incoming gradients after its pre-hooks (a
// user's tensor hook on the call's output has run, as it runs before
// msprobe's per-call hook) and the gradients it passes on.
class CallHook : public torch::autograd::FunctionPostHook {
 public:
  explicit CallHook(HookSite site) : site_(std::move(site)) {}
  variable_list operator()(const variable_list& outputs,
                           const variable_list& inputs) override {
    site_.Deliver(site_.output_side && !site_.chain ? inputs : outputs);
    return outputs;
  }

 private:
  HookSite site_;
};

// The hooks one call needs, by node.
struct CallHooks {
  std::vector<std::pair<Node*, HookSite>> incoming, passed;
  HookSite& At(std::vector<std::pair<Node*, HookSite>>* sites, Node* n,
               const HookSite& proto) {
    for (auto& [node, site] : *sites) {
      if (node == n) return site;
    }
    sites->emplace_back(n, proto);
    return sites->back().second;
  }
};

// Hooks run first-added-last: where calls share a node, the one that ended
// later (an enclosing module, a call consuming the other's output without
// a node of its own) is written first, in backward order. The hooks only
// look, so running before hooks added by others changes nothing.
void Prepend(Node* n, HookSite site) {
  auto& hooks = n->post_hooks();
  hooks.insert(hooks.begin(), std::make_unique<CallHook>(std::move(site)));
}

// A tensor the caller passed (not a Python number ATen wrapped: it has no
// gradient, and the dump records it as the number).
bool IsUserTensor(const c10::IValue& v) {
  return v.isTensor() &&
         !v.toTensor().unsafeGetTensorImpl()->is_wrapped_number();
}

}  // namespace

CallInputs NoteCallInputs(c10::ArrayRef<const c10::IValue> inputs) {
  CallInputs in;
  in.seq_begin = at::sequence_number::peek();
  if (!inputs.empty() && inputs[0].isTensor() && inputs[0].toTensor().defined())
    in.first_input = at::TensorGeometry(inputs[0].toTensor());
  for (const c10::IValue& v : inputs) {
    if (IsUserTensor(v)) {
      NoteTensor(v.toTensor(), &in);
      in.arg_shape.push_back(-1);
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> list = v.toTensorList();
      for (const at::Tensor& t : list) NoteTensor(t, &in);
      in.arg_shape.push_back(static_cast<int>(list.size()));
    }
  }
  return in;
}

std::vector<at::Tensor> FlattenTensors(const std::vector<c10::IValue>& values) {
  std::vector<at::Tensor> out;
  for (const c10::IValue& v : values) {
    if (v.isTensor()) {
      out.push_back(v.toTensor());
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) out.push_back(t);
    }
  }
  return out;
}

// Same sizes, strides and offset.
bool SameGeometry(const at::Tensor& t, const at::TensorGeometry& g) {
  return t.sizes() == g.sizes() && t.strides() == g.strides() &&
         t.storage_offset() == g.storage_offset();
}

void ProbeImpl::HookCall(const std::string& name, const CallInputs& in,
                         const std::vector<c10::IValue>& outputs) {
  std::vector<at::Tensor> outs = FlattenTensors(outputs);
  uint64_t seq_end = at::sequence_number::peek();
  auto is_new = [&](const Node* n) {
    return n != nullptr && n->sequence_nr() >= in.seq_begin &&
           n->sequence_nr() < seq_end;
  };
  int64_t id = next_call_id_++;
  HookSite proto{this, session_, step_, id, true, {}, {}, {}, {}};
  CallHooks hooks;
  BackwardCall call;
  call.name = name;
  call.out_grads.resize(outs.size());
  call.in_grads.resize(in.edges.size());
  call.arg_shape = in.arg_shape;
  // The subgraph: nodes reachable from the outputs, made during the call.
  std::vector<Node*> todo, subgraph;
  std::vector<Edge> out_edges(outs.size());
  for (size_t j = 0; j < outs.size(); ++j) {
    const at::Tensor& y = outs[j];
    if (!y.defined() || !y.requires_grad()) continue;
    out_edges[j] = torch::autograd::impl::gradient_edge(y);
    Node* n = out_edges[j].function.get();
    if (is_new(n) && std::find(todo.begin(), todo.end(), n) == todo.end()) {
      todo.push_back(n);
    }
  }
  std::unordered_set<Node*> seen(todo.begin(), todo.end());
  std::vector<torch::autograd::CopySlices*> copies;
  while (!todo.empty()) {
    Node* n = todo.back();
    todo.pop_back();
    subgraph.push_back(n);
    auto* copy = dynamic_cast<torch::autograd::CopySlices*>(n);
    if (copy != nullptr) copies.push_back(copy);
    for (uint32_t k = 0; k < n->num_outputs(); ++k) {
      const Edge& e = n->next_edge(k);
      Node* m = e.function.get();
      if (m == nullptr) continue;
      if (is_new(m)) {
        if (seen.insert(m).second) todo.push_back(m);
        continue;
      }
      for (size_t i = 0; i < in.edges.size(); ++i) {
        bool direct = SameEdge(in.edges[i], e);
        // An in-place call on view x_i: CopySlices passes its base's
        // gradient on; x_i's share is the view's region of it.
        bool sliced = copy != nullptr && k == 0 && !direct &&
                      SameEdge(in.base_edges[i], e);
        if (!direct && !sliced) continue;
        HookSite& s = hooks.At(&hooks.passed, n, proto);
        s.output_side = false;
        if (sliced) {
          s.base = copy->base;
          s.view = copy->view;
          HookViewChain(in.edges[i], copy);
        }
        s.targets.push_back({k, static_cast<uint32_t>(i), sliced});
      }
    }
  }
  for (size_t j = 0; j < outs.size(); ++j) {
    Node* n = out_edges[j].function.get();
    if (n == nullptr) continue;
    // An in-place call on a view: the gradient of what it wrote is the
    // view's region of the base's gradient (later uses of the base read it
    // too), which CopySlices receives.
    auto copy = std::find_if(copies.begin(), copies.end(), [&](auto* c) {
      return outs[j].is_view() && SameGeometry(outs[j], c->view);
    });
    if (copy != copies.end()) {
      HookSite& s = hooks.At(&hooks.incoming, *copy, proto);
      s.base = (*copy)->base;
      s.view = (*copy)->view;
      s.targets.push_back({0, static_cast<uint32_t>(j), true});
      continue;
    }
    HookSite& s = hooks.At(&hooks.incoming, n, proto);
    s.targets.push_back(
        {out_edges[j].input_nr, static_cast<uint32_t>(j), false});
    if (is_new(n)) {
      if (outs[j].is_view() && in.first_input) {
        view_calls_[n] = {id, static_cast<uint32_t>(j), *in.first_input,
                          at::TensorGeometry(outs[j])};
      }
      continue;
    }
    // The call returned (a tensor sharing the edge of) an input: what
    // arrives there passes through unchanged to the first such input
    // (type_as(x, x) passes nothing to its second). A leaf's gradient
    // accumulator lives only as long as something holds it: the call does,
    // so that later uses of the leaf reach the hooked one.
    for (size_t i = 0; i < in.edges.size(); ++i) {
      if (!SameEdge(in.edges[i], out_edges[j])) continue;
      call.identity.emplace_back(j, i);
      break;
    }
    call.keep_alive.push_back(out_edges[j].function);
  }
  if (hooks.incoming.empty()) return;  // no output needs a gradient
  call.pending = static_cast<int>(hooks.incoming.size() + hooks.passed.size());
  for (auto& sites : {&hooks.incoming, &hooks.passed}) {
    for (auto& [n, site] : *sites) Prepend(n, std::move(site));
  }
  backward_calls_.emplace(id, std::move(call));
}

void ProbeImpl::HookViewChain(const Edge& view_edge,
                              torch::autograd::CopySlices* copy) {
  Node* n = view_edge.function.get();
  for (auto it = view_calls_.find(n); it != view_calls_.end();
       it = view_calls_.find(n)) {
    auto call = backward_calls_.find(it->second.call);
    if (call != backward_calls_.end()) {
      HookSite s{
          this,
          session_,
          step_,
          it->second.call,
          false,
          {},
          copy->base,
          copy->view,
          ViewChain{it->second.in, it->second.out, it->second.out_index}};
      Prepend(copy, std::move(s));
      call->second.pending += 2;  // DeliverChain delivers both sides
    }
    n = n->num_outputs() > 0 ? n->next_edge(0).function.get() : nullptr;
  }
}

void ProbeImpl::OnCallGrads(
    int64_t step, int64_t id, bool output_side,
    std::vector<std::pair<uint32_t, at::Tensor>> grads) {
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ == nullptr || terminated_ || step != step_) return;
  auto it = backward_calls_.find(id);
  if (it == backward_calls_.end()) return;
  BackwardCall& c = it->second;
  at::DisableRecordFunctionGuard no_recursion;
  Guarded(c.name, [&] {
    std::vector<at::Tensor>& side = output_side ? c.out_grads : c.in_grads;
    for (auto& [to, g] : grads) {
      if (!g.defined()) continue;
      at::Tensor& slot = side[to];
      slot = slot.defined() ? slot + g : std::move(g);
    }
  });
  c.arrived = true;
  if (--c.pending > 0) return;
  WriteBackward(&c);
  backward_calls_.erase(it);
}

void ProbeImpl::WriteBackward(BackwardCall* c) {
  at::DisableRecordFunctionGuard no_recursion;
  Guarded(c->name, [&] {
    for (auto [j, i] : c->identity) {
      if (!c->in_grads[i].defined()) c->in_grads[i] = c->out_grads[j];
    }
    PyJsonBuilder e(DumpWriter::kEntryLevel);
    e.BeginDict().Key("input");
    ListIf(config_.input, c->out_grads, c->name + ".input", &e);
    e.Key("output");
    if (!config_.output) {
      e.BeginList().EndList();
    } else {
      WriteArgGrads(*c, &e);
    }
    AddEntry(c->name, e.EndDict().Take());
  });
}

void ProbeImpl::WriteArgGrads(const BackwardCall& c, PyJsonBuilder* e) {
  std::string stem = c.name + ".output";
  e->BeginList();
  size_t next = 0;
  for (size_t a = 0; a < c.arg_shape.size(); ++a) {
    std::string at = stem + "." + std::to_string(a);
    int n = c.arg_shape[a];
    if (n < 0) {
      summarizer_.Tensor(c.in_grads[next++], at, e);
      continue;
    }
    e->BeginList();
    for (int k = 0; k < n; ++k) {
      summarizer_.Tensor(c.in_grads[next++], at + "." + std::to_string(k), e);
    }
    e->EndList();
  }
  e->EndList();
}

void ProbeImpl::FlushBackwards() {
  // Calls some of whose nodes never ran (an output no loss used): what
  // arrived is written, in call order; calls no gradient reached leave
  // nothing.
  for (auto& [id, c] : backward_calls_) {
    if (c.arrived) WriteBackward(&c);
  }
  backward_calls_.clear();
  view_calls_.clear();
}

}  // namespace lockstep
