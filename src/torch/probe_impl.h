// The probe's state and the work its callbacks do (see probe.h).
// Thread safety: every member below mu_ is guarded by it.
#ifndef LOCKSTEP_SRC_TORCH_PROBE_IMPL_H_
#define LOCKSTEP_SRC_TORCH_PROBE_IMPL_H_

#include <ATen/record_function.h>
#include <torch/csrc/autograd/functions/tensor.h>
#include <torch/nn/module.h>

#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lockstep/format/api_naming.h"
#include "lockstep/format/background_writer.h"
#include "lockstep/format/dump_writer.h"
#include "lockstep/format/probe_config.h"
#include "lockstep/torch/probe.h"
#include "torch/probe_backward.h"
#include "torch/shadow.h"
#include "torch/tensor_summary.h"

namespace lockstep {

// One entry's call stack (stack.json), shared by the steps that repeat it.
using StackFrames = std::shared_ptr<const std::vector<std::string>>;

// What the start callback of a dumped operator hands to its end callback.
struct OpContext : at::ObserverContext {
  std::string base;  // "Functional.linear.0"
  std::string fwd;   // its forward entry: "Functional.linear.0.forward"
  // Tensor and shadow tasks: the ATen operator and overload
  // ("aten::add.Tensor"), whose schema the recorded arguments follow;
  // written as the entry's "aten" (lockstep replay rebuilds the call from
  // it; msprobe ignores the key).
  std::string aten;
  bool forward = true;
  bool take_stack = false;  // ProbeImpl::TakeStack after the start
  // The entry's text so far: {"input_args": [...] (the end callback adds
  // the rest).
  PyJsonBuilder entry{DumpWriter::kEntryLevel};
  // Overflow task, and a call the shadow task checks: its inputs, kept
  // until its end (HoldInputs).
  std::vector<c10::IValue> held;
  // Shadow task: the call is checked (sampled), against operator `op`
  // (nullopt: it has none).
  bool shadow = false;
  std::optional<c10::OperatorHandle> op;
  bool backward = false;  // the call's backward is captured
  CallInputs inputs;      // when backward
  // A torch.distributed collective (c10d:: operator): its entry is written
  // in msprobe's form (probe_collectives.cc); the end callback waits for
  // its work before recording what it wrote.
  bool collective = false;
  // input_kwargs is written (the Python call's, WritePythonArgs).
  bool kwargs_written = false;
};

// Writes "input_args": [...], "input_kwargs": {...} into `b` (an open
// dict) from `layout`, the Python call's arguments as
// python/lockstep_probe/_api_names.py encodes them: values, with each
// tensor named by its TensorImpl's address and taken from `inputs`, the
// operator's own (lists included). Writes nothing and returns false if the
// layout is malformed or names a tensor that is not among `inputs`.
bool WritePythonArgs(std::string_view layout,
                     c10::ArrayRef<const c10::IValue> inputs,
                     const std::string& stem, TensorSummarizer* summarizer,
                     PyJsonBuilder* b);

// Waits for the c10d work a collective call returned (probe_collectives.cc).
void WaitForCollective(const at::RecordFunction& fn);

class ProbeImpl {
 public:
  ProbeImpl(ProbeConfig config, ProbeOptions options);
  ~ProbeImpl();

  Status Start();
  Status Step();
  Status Stop();

  // Callbacks (probe_callbacks.cc, probe_modules.cc).
  // api: the entry's name without its count ("" for the operator's own,
  // MsprobeApiName of it); python_args: the Python call's arguments
  // (WritePythonArgs), "" for the operator's.
  std::unique_ptr<OpContext> OpStart(const at::RecordFunction& fn,
                                     std::string_view api,
                                     std::string_view python_args);
  std::unique_ptr<OpContext> OpStartLocked(const at::RecordFunction& fn,
                                           std::string_view api,
                                           std::string_view python_args);
  void OpEnd(const at::RecordFunction& fn, OpContext* ctx);
  // probe_collectives.cc: a collective's input_args and input_kwargs (at
  // the start, held in ctx), and its output once its work is done.
  void CollectiveInputs(const at::RecordFunction& fn, OpContext* ctx);
  void CollectiveOutputs(OpContext* ctx);
  // A backward hook of call `id` of `step` (probe_backward.cc): gradients
  // of the call's outputs (output_side) or of its tensor inputs, by index.
  void OnCallGrads(int64_t step, int64_t id, bool output_side,
                   std::vector<std::pair<uint32_t, at::Tensor>> grads);
  int64_t ModuleBegin(const torch::nn::Module& m,
                      const std::vector<at::Tensor>& inputs);
  void ModuleOutputs(int64_t token, const std::vector<at::Tensor>& outputs);
  void ModuleEnd(int64_t token);
  int64_t ModuleBegin(
      const std::string& module, const std::vector<at::Tensor>& inputs,
      const std::vector<std::pair<std::string, at::Tensor>>& params);
  void RegisterModel(const torch::nn::Module& root);
  void RegisterParameters(const std::string& module,
                          const std::vector<std::string>& names,
                          const std::vector<at::Tensor>& params);
  void ClearParameters();
  void Save(const std::string& name, const at::Tensor& value);

  // Notes that `what` (an entry, a tensor, a file) was skipped and why: it
  // goes into the step's dump.json under "skipped", and a reason not seen
  // before is logged as a warning when `warn`. REQUIRES: mu_ held.
  void NoteSkip(std::string what, std::string why, bool warn = true);
  // A step's dump.json (`what`: "stepN/rankR/dump.json") not written.
  void NoteFailedDumpJson(std::string what, const std::string& why);
  // After a write failed for want of space (`why`): tensor files are no
  // longer saved, for the rest of the run (said once, as a warning);
  // dump.json keeps the statistics. REQUIRES: mu_ held.
  void NoteWriteFailure(const std::string& why);
  // Runs `body` (a callback's work, under mu_). An exception from it (a
  // value the probe cannot handle) is noted as a skip of `what` instead of
  // reaching the training code.
  template <typename F>
  void Guarded(std::string_view what, F&& body) noexcept {
    try {
      body();
    } catch (const std::exception& e) {
      NoteSkip(std::string(what), ExceptionText(e));
    } catch (...) {
      NoteSkip(std::string(what), "unknown exception");
    }
  }
  static std::string ExceptionText(const std::exception& e);

  uint64_t session() const { return session_; }
  bool level_has_ops() const { return config_.level != ProbeLevel::kL0; }
  bool level_has_modules() const { return config_.level != ProbeLevel::kL1; }

  mutable std::mutex mu_;
  ProbeConfig config_;
  ProbeOptions options_;
  bool active_ = false;
  // The dump path this probe has started on before: restarting there (Stop,
  // then Start) continues this run, so its steps are not an earlier dump.
  std::string started_on_;
  bool terminated_ = false;
  int64_t step_ = 0;
  int64_t rank_ = 0;
  int64_t entries_in_step_ = 0;
  int64_t overflow_count_ = 0;

 private:
  struct OpenModule {
    std::string name;        // Module.conv1.Conv2d.forward.0
    bool backward = false;   // its backward is captured
    CallInputs call_inputs;  // when backward
    std::string inputs;      // JSON text at level 0 (PyJsonBuilder::Fragment)
    std::string params;
    bool recorded = false;
  };
  struct ParamGrads {
    std::string module;  // Module.conv1.Conv2d
    std::vector<std::string> names;
    // By name index: JSON text at level 0; empty until it arrives.
    std::vector<std::string> grads;
    size_t arrived = 0;
    int64_t index = -1;  // n of the entry being filled
  };

  struct SkipNote {
    std::string what;
    std::string why;
  };
  static constexpr size_t kMaxSkipNotes = 100;  // per dump.json

  // first: the step Start begins; its directory is made at once (an
  // unwritable dump path fails Start). Later steps' directories are made
  // with their dump.json (or first tensor file).
  Status BeginStep(bool first = false);
  // Ends the step: waits for its tensor files, then writes its dump.json
  // (with options_.write_behind: queues it on files_, after them).
  // drop_if_empty: a step with no entries leaves nothing.
  Status EndStep(bool drop_if_empty = false);
  // Waits for files_ and notes what it could not write (tensor files, an
  // earlier step's dump.json) as skips of the next dump.json.
  Status CollectWrites();
  // The "skipped" value of dump.json for skipped_.
  PyValue SkippedValue() const;
  // The summaries of `values` as the next value of b when `wanted` (the
  // config's input/output switch), else [].
  template <typename Values>
  void ListIf(bool wanted, const Values& values, std::string stem,
              PyJsonBuilder* b) {
    if (wanted) {
      summarizer_.List(values, std::move(stem), b);
    } else {
      b->BeginList().EndList();
    }
  }
  // Which of fn's arguments are dtypes (ScalarType in its schema), for
  // TensorSummarizer::Args; empty when none of its inputs is an int.
  // `aten`: AtenName(fn) when the caller has it already (tensor mode),
  // else "" and it is computed here.
  const std::vector<bool>& DtypeArgs(const at::RecordFunction& fn,
                                     const std::string& aten);
  // `text`: the entry's value, JSON at DumpWriter::kEntryLevel.
  void AddEntry(std::string name, std::string text);
  // A call whose backward is awaited: the gradients of its outputs and of
  // its tensor inputs so far, and the hooks yet to run.
  struct BackwardCall {
    std::string name;                   // Functional.linear.0.backward
    std::vector<at::Tensor> out_grads;  // per output tensor
    std::vector<at::Tensor> in_grads;   // per tensor input (summed)
    std::vector<int> arg_shape;         // CallInputs::arg_shape
    // (output j, input i): the call returned input i as output j.
    std::vector<std::pair<size_t, size_t>> identity;
    std::vector<std::shared_ptr<torch::autograd::Node>> keep_alive;
    int pending = 0;
    bool arrived = false;
  };
  // Hooks the autograd nodes of the call that just ended, whose backward
  // entry is `name` (Functional.linear.0.backward,
  // Module.fc1.Linear.backward.0). A view call's source geometry
  // (in.first_input) is kept for in-place calls on its output later.
  void HookCall(const std::string& name, const CallInputs& in,
                const std::vector<c10::IValue>& outputs);
  // An in-place call on the view with edge `view_edge` made `copy`: the
  // view calls that made that view (and the views it came from) get their
  // share of the gradient from `copy`.
  void HookViewChain(const torch::autograd::Edge& view_edge,
                     torch::autograd::CopySlices* copy);
  // A view call awaiting its backward, by its output's node.
  struct ViewCall {
    int64_t call;
    uint32_t out_index;
    at::TensorGeometry in, out;
  };
  std::unordered_map<const torch::autograd::Node*, ViewCall> view_calls_;
  void WriteBackward(BackwardCall* c);
  void WriteArgGrads(const BackwardCall& c, PyJsonBuilder* e);
  // Writes what arrived for calls still waiting (at the step's end).
  void FlushBackwards();
  void OnParamGrad(size_t group, size_t index, const at::Tensor& grad);
  std::string ModulePath(const torch::nn::Module& m) const;
  void RemoveParamHooks();
  // Hooks the gradients of those of `params` that require grad, as one
  // parameters_grad entry of `module`. REQUIRES: mu_ held.
  void AddParamGroup(const std::string& module,
                     const std::vector<std::string>& names,
                     const std::vector<at::Tensor>& params);
  // stack.json (ProbeOptions::stack_frames). StackWanted: whether entry
  // `name`'s stack must be taken (false: none is wanted, or a stack of
  // that name is known and noted for this step). REQUIRES: mu_ held.
  // TakeStack: takes it and notes it; REQUIRES: mu_ NOT held (the frames
  // come from Python, which may need its own lock first).
  bool StackWanted(const std::string& name);
  void TakeStack(const std::string& name);
  std::unordered_map<std::string, StackFrames> stacks_by_name_;
  std::unordered_map<std::string, StackFrames> interned_frames_;  // by text
  std::vector<std::pair<std::string, StackFrames>> step_stacks_;

  ProbeFilter filter_;
  std::unique_ptr<BackgroundWriter> files_;
  TensorSummarizer summarizer_;
  std::unique_ptr<DumpWriter> writer_;  // null: this step is not dumped
  ApiCallCounter api_calls_;
  ApiCallCounter module_calls_;
  ApiCallCounter grad_calls_;
  ApiCallCounter debug_calls_;
  std::vector<std::string> pending_names_;
  std::vector<std::string> pending_;  // entry values, as AddEntry takes them
  std::vector<std::pair<std::string, std::string>> parents_;
  std::vector<std::string> module_stack_;
  std::map<int64_t, OpenModule> open_modules_;
  std::map<int64_t, BackwardCall> backward_calls_;  // by call order
  int64_t next_call_id_ = 0;
  int64_t next_token_ = 0;
  std::unordered_map<const torch::nn::Module*, std::string> module_paths_;
  const torch::nn::Module* root_ = nullptr;
  std::vector<ParamGrads> param_groups_;
  std::vector<std::pair<at::Tensor, unsigned>> param_hooks_;
  std::unordered_map<std::string, std::string> api_names_;  // cache
  // Per operator (aten::to.dtype), which arguments are dtypes: cache of
  // DtypeArgs.
  std::unordered_map<std::string, std::vector<bool>> dtype_args_;
  at::CallbackHandle callback_ = 0;
  uint64_t session_ = 0;
  // Skipped in this step, and earlier steps' dump.json files that could not
  // be written (named step<N>/rank<R>/dump.json).
  std::vector<SkipNote> skipped_;
  size_t skipped_more_ = 0;                 // beyond kMaxSkipNotes
  std::unordered_set<std::string> warned_;  // reasons already logged
  // The step at which the disk was found full (tensor files stopped), or -1.
  int64_t disk_full_step_ = -1;
  // Set by a step's dump.json write that found the disk full.
  std::shared_ptr<std::atomic<bool>> dump_json_disk_full_ =
      std::make_shared<std::atomic<bool>>(false);
  // dump.json files not written, for Stop's Status (a later dump.json also
  // lists them, if one is written).
  struct LostDumps {
    size_t count = 0;
    std::string first, last, why;
  } lost_dumps_;
};

// The active probe, or null; set by Start, cleared by Stop.
extern std::atomic<ProbeImpl*> g_active_probe;

// Registers/removes the RecordFunction callbacks (probe_callbacks.cc).
at::CallbackHandle AddProbeCallbacks();
// Resets the calling thread's operator nesting depth.
void ResetProbeDepth();

// While one is alive, the operators the calling thread runs are not
// entries, nor counted as the current entry's inner calls: the probe's own
// work (a copy, item()) inside its callbacks. Unlike
// at::DisableRecordFunctionGuard it never changes LibTorch's state (which
// costs ~0.5 us a change); other RecordFunction observers (a profiler) may
// see these operators when RecordFunction is on.
class ProbeOwnWork {
 public:
  ProbeOwnWork();
  ~ProbeOwnWork();
  ProbeOwnWork(const ProbeOwnWork&) = delete;
  ProbeOwnWork& operator=(const ProbeOwnWork&) = delete;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_TORCH_PROBE_IMPL_H_
