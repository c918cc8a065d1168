#include "lockstep/torch/replay.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>

#include "lockstep/core/parallel.h"
#include "lockstep/format/discovery.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/rank_tensors.h"
#include "lockstep/format/tensor.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/numerics/replay_error.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/replay_internal.h"
#include "torch/replay_worker.h"
#include "torch/shadow.h"

namespace lockstep {
namespace {

using replay::BoundCall;
using replay::Call;
using replay::Check;
using replay::CheckForward;
using replay::CpuRun;
using replay::FlattenRecorded;
using replay::ForwardRule;
using replay::IsRecordedTensor;
using replay::Mode;
using replay::Prepare;
using replay::PrepareTensor;
using replay::Rule;
using replay::TensorInputs;

// The work of one rank.
class RankReplay {
 public:
  RankReplay(const RankLayout& layout, int64_t step, const DumpFile& dump,
             RankTensors tensors, replay::CallLimits limits)
      : layout_(layout),
        step_(step),
        dump_(dump),
        tensors_(std::move(tensors)),
        limits_(limits) {
    for (size_t i = 0; i < dump_.entries.size(); ++i) {
      by_name_.emplace(dump_.entries[i].name, i);
    }
  }

  // The fields every check of entry i carries.
  ReplayCheck Base(size_t i) const {
    ReplayCheck base;
    base.step = step_;
    base.rank = layout_.rank;
    base.entry = dump_.entries[i].name;
    return base;
  }

  std::vector<ReplayCheck> Entry(size_t i, bool backward) {
    const DumpEntry& e = dump_.entries[i];
    std::vector<ReplayCheck> out;
    ReplayCheck base = Base(i);
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
    if (dump_.task == "shadow") return Shadow(e, base, is_bwd);
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
    } catch (const replay::CallRefused& ex) {
      out.clear();
      whole(ReplayVerdict::kNotReplayable, ex.what());
      out.back().op = ex.op();
      return out;
    } catch (const std::exception& ex) {
      out.clear();
      return whole(ReplayVerdict::kNotReplayable,
                   "LibTorch refused the replayed call: " +
                       replay::FirstLine(ex.what()));
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

  // A shadow-task dump: the checks the probe made as the call ran.
  std::vector<ReplayCheck> Shadow(const DumpEntry& e, ReplayCheck base,
                                  bool is_bwd) {
    const PyValue* aten = e.value.Find("aten");
    if (aten != nullptr && aten->kind() == PyValue::Kind::kStr) {
      base.op = aten->as_str();
    }
    const PyValue* list = e.value.Find("shadow");
    if (list != nullptr) return ReadShadowList(*list, base);
    base.verdict = ReplayVerdict::kSkipped;
    base.reason = is_bwd ? "the shadow task checks forward calls only"
                         : "not sampled by the shadow task (sample_rate)";
    return {base};
  }

  StatusOr<BoundCall> Bind(const DumpEntry& e) {
    return replay::BindCall(e.name, e.value, Loader());
  }

  // The entry's "aten" key (lockstep's probe), or "".
  static std::string AtenKey(const DumpEntry& e) {
    const PyValue* aten = e.value.Find("aten");
    return aten != nullptr && aten->kind() == PyValue::Kind::kStr
               ? aten->as_str()
               : "";
  }

  // Bytes of the recorded tensors a call is checked against, in float64
  // (the call's memory budget grows with them).
  static double RecordedBytes(
      std::initializer_list<const std::vector<std::optional<at::Tensor>>*>
          lists) {
    double bytes = 0;
    for (const auto* list : lists) {
      for (const auto& t : *list) {
        if (t) bytes += 8.0 * static_cast<double>(t->numel());
      }
    }
    return bytes;
  }

  void Forward(const DumpEntry& e, const ReplayCheck& base,
               std::vector<ReplayCheck>* out) {
    StatusOr<BoundCall> call = Bind(e);
    if (!call.ok()) {
      ReplayCheck c = base;
      c.op = AtenKey(e);
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason = call.status().message();
      out->push_back(std::move(c));
      return;
    }
    StatusOr<std::vector<std::optional<at::Tensor>>> recorded =
        LoadList(e.value.Find("output"));
    if (!recorded.ok()) {
      ReplayCheck c = base;
      c.op = call->name;
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason = recorded.status().message();
      out->push_back(std::move(c));
      return;
    }
    // Nothing to check against: not run at all (a hostile dump.json cannot
    // make it allocate what no recorded output shows).
    if (std::none_of(recorded->begin(), recorded->end(),
                     [](const auto& t) { return t.has_value(); })) {
      ReplayCheck c = base;
      c.op = call->name;
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason =
          "its outputs are not tensors, or none was saved: nothing "
          "to compare";
      out->push_back(std::move(c));
      return;
    }
    if (std::string r =
            replay::AdmitCall(&*call, RecordedBytes({&*recorded}), limits_);
        !r.empty()) {
      ReplayCheck c = base;
      c.op = call->name;
      c.verdict = ReplayVerdict::kNotReplayable;
      c.reason = std::move(r);
      out->push_back(std::move(c));
      return;
    }
    CheckForward(*call, *recorded, base, out);
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
          AtenKey(dump_.entries[it->second]),
          "its forward call cannot be rebuilt: " + call.status().message());
    }
    StatusOr<std::vector<std::optional<at::Tensor>>> grad_out =
        LoadList(e.value.Find("input"));
    if (!grad_out.ok()) return fail(call->name, grad_out.status().message());
    StatusOr<std::vector<std::optional<at::Tensor>>> grad_in =
        LoadList(e.value.Find("output"));
    if (!grad_in.ok()) return fail(call->name, grad_in.status().message());
    if (std::string r = replay::AdmitCall(
            &*call, RecordedBytes({&*grad_out, &*grad_in}), limits_);
        !r.empty()) {
      return fail(call->name, r);
    }
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
                        ShapeToString((*grad_in)[i]->sizes().vec()) +
                        ", input " + std::to_string(i) + " " +
                        ShapeToString(inputs[i]->sizes().vec()) +
                        " (msprobe records the autograd node's inputs, not "
                        "the call's)");
      }
    }
    // One run: forward with leaves, then the vector-Jacobian product, all
    // within the call's memory budget.
    auto run = [&](Mode m) -> std::vector<c10::IValue> {
      std::vector<c10::IValue> vjp;
      replay::WithinBudget(*call, [&] {
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
        vjp.assign(inputs.size(), c10::IValue());
        if (ys.empty() || leaves.empty()) return;
        std::vector<at::Tensor> grads = torch::autograd::grad(
            ys, leaves, gs, /*retain_graph=*/false, /*create_graph=*/false,
            /*allow_unused=*/true);
        for (size_t l = 0; l < leaves.size(); ++l) {
          vjp[leaf_of[l]] =
              grads[l].defined() ? grads[l] : at::zeros_like(leaves[l]);
        }
      });
      return vjp;
    };
    std::vector<c10::IValue> ref = run(Mode::kFloat64);
    // k from the forward's arguments (its outputs are not at hand here).
    Rule fwd = ForwardRule(call->name, call->args, {});
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
      // The backward of a sum of k terms per output does as many
      // multiply-adds: k per input element on average.
      int64_t k_bwd = std::max<int64_t>(1, grad_numel * fwd.k / numel);
      // Gathers (embedding, index_select, ...) scatter-add their gradient:
      // one row may receive every indexed position.
      if (const replay::OpRule* op = replay::FindOpRule(call->name);
          op != nullptr && op->gathers) {
        for (const c10::IValue& v : call->args) {
          if (v.isTensor() && !v.toTensor().is_floating_point()) {
            k_bwd = std::max<int64_t>(k_bwd, v.toTensor().numel());
          }
        }
      }
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
  replay::CallLimits limits_;
  std::map<std::string, size_t> by_name_;
};

}  // namespace

StatusOr<ReplayResult> ReplayDump(const ReplayOptions& options) {
  StatusOr<DumpLayout> layout = DiscoverDump(options.dump);
  if (!layout.ok()) return layout.status();
  if (Status s = SelectStepsAndRanks(options.steps, options.ranks, options.dump,
                                     &*layout);
      !s.ok()) {
    return s;
  }
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
    for (const RankLayout& r : s.ranks) {
      StatusOr<DumpFile> d = ReadDumpJson(r.dump_json);
      if (!d.ok()) return d.status();
      work.push_back({s.step, r, std::move(*d)});
    }
  }
  // Every entry of every rank, in dump order: (rank, entry).
  std::vector<std::unique_ptr<RankReplay>> ranks;
  std::vector<std::pair<size_t, size_t>> entries;
  replay::CallLimits limits{options.max_call_memory};
  for (Work& w : work) {
    ranks.push_back(std::make_unique<RankReplay>(
        w.rank, w.step, w.dump, RankTensors::Open(w.rank.dir), limits));
    for (size_t i = 0; i < ranks.back()->size(); ++i) {
      entries.emplace_back(ranks.size() - 1, i);
    }
  }
  auto replay_entry = [&](size_t k) {
    return ranks[entries[k].first]->Entry(entries[k].second, options.backward);
  };
  std::atomic<size_t> done{0};
  std::mutex progress_mu;
  auto on_done = [&](size_t) {
    size_t d = ++done;
    if (options.progress) {
      std::lock_guard<std::mutex> lock(progress_mu);
      options.progress(d, entries.size());
    }
  };
  int jobs = std::max(1, options.jobs);
  std::vector<std::vector<ReplayCheck>> per(entries.size());
  if (options.max_call_seconds > 0 && !entries.empty()) {
    Status s =
        ReplayEntriesIsolated(entries.size(), jobs, options.max_call_seconds,
                              replay_entry, on_done, &per);
    if (!s.ok()) return s;
    for (size_t k = 0; k < per.size(); ++k) {
      for (ReplayCheck& c : per[k]) {
        if (!c.entry.empty()) continue;  // stopped or killed: name it
        ReplayCheck base = ranks[entries[k].first]->Base(entries[k].second);
        base.verdict = c.verdict;
        base.reason = std::move(c.reason);
        c = std::move(base);
      }
    }
  } else {
    ParallelFor(entries.size(), jobs, [&](size_t k) {
      per[k] = replay_entry(k);
      on_done(k);
    });
  }
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
  return result;
}

}  // namespace lockstep
