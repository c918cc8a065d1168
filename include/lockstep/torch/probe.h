// Probe: dumps a LibTorch training run operator by operator, forward and
// backward, in msprobe's layout (docs/msprobe_reference.md §2), so that
// `lockstep compare` and msprobe's own tools read it:
//
//   lockstep::ProbeConfig config;          // or LoadProbeConfig(config.json)
//   config.dump_path = "dump";
//   auto probe = lockstep::Probe::Create(config).value();
//   probe->Start();
//   for (...) { forward; backward; optimizer.step(); probe->Step(); }
//   probe->Stop();
//
// How: global at::RecordFunction callbacks see every ATen operator. The
// outermost operator of each call is an entry (its inner operators are not,
// as msprobe dumps the API a user called, not its parts); names follow
// format/api_naming.h. Inputs are summarized in the start callback (before
// an in-place operator changes them), outputs in the end callback. The
// backward entry, numbered like its forward, is the call's own
// vector-Jacobian product (input: the gradients of its outputs; output: the
// gradients it passes to each tensor argument, null where none), taken by
// post-hooks on the autograd nodes the call built (src/torch/
// probe_backward.h). Level L0/mix adds module entries through ModuleScope.
//
// Step N of rank R goes to {dump_path}/step{N}/rank{R}/. dump.json is
// written atomically, once per step, after the step's tensor files, so a
// process killed mid-run leaves a readable dump of every finished step
// (ProbeOptions::write_behind trades the last one for writing in the
// background). Tensor files are written on a background thread through a
// queue bounded in bytes.
// Statistics of CPU tensors come from lockstep's one-pass kernel; those of
// other devices are reduced on the device and fetched once per step (no
// host sync per tensor).
//
// Thread safety: one probe may be active per process. Start/Step/Stop from
// the training thread; the callbacks may run on any thread (autograd device
// threads) and are serialized internally.
#ifndef LOCKSTEP_TORCH_PROBE_H_
#define LOCKSTEP_TORCH_PROBE_H_

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/probe_config.h"

namespace lockstep {

struct ProbeOptions {
  // This process's rank; -1: $RANK if set, else 0.
  int64_t rank = -1;
  // The number of the first step dumped (msprobe's init_step).
  int64_t first_step = 0;
  // Reduce statistics the way non-CPU tensors are (ATen ops, one fetch per
  // step) even on the CPU: lets tests check the device path without one.
  bool device_style_stats = false;
  // Bound of the tensor-file queue.
  size_t writer_queue_bytes = size_t{256} << 20;
  // Start() writes the environment fingerprint (torch/env_capture.h) to
  // {dump_path}/env.json (by the first rank dumped), with checksums of the
  // registered model's parameters and these settings as its "run" section, so
  // that `lockstep compare` can warn when two runs' environments differ.
  bool write_env = true;
  std::vector<std::pair<std::string, std::string>> run_info;
  // Write each step's dump.json (and make its directory) on the background
  // thread while the next step trains. Off by default: Step() returns when
  // the step's dump.json is on disk, so a process killed mid-run keeps
  // every finished step. On: a kill may lose the last finished step; it
  // pays where file creation is slow (this project's VM: 1.52x -> 1.36x of
  // a LeNet step on ext4, no gain on tmpfs). Stop() waits for all either
  // way.
  bool write_behind = false;
  // Where forward entries' call stacks come from, for stack.json (msprobe's
  // HEAD format, docs/msprobe_reference.md 2.5): frames innermost first, each
  // "File {path}, line {n}, in {func}, \n {code}". Empty (C++, where no
  // source stack is at hand): no stack.json. The Python probe sets it to
  // read the Python frames. Called without the probe's lock, on the thread
  // of the call, once per entry name: a name that recurs in a later step
  // (the same call of the same loop) keeps the stack of its first call.
  std::function<std::vector<std::string>()> stack_frames;
};

class ProbeImpl;

class Probe {
 public:
  // Errors: InvalidArgument from ValidateProbeConfig.
  static StatusOr<std::unique_ptr<Probe>> Create(ProbeConfig config,
                                                 ProbeOptions options = {});
  ~Probe();  // Stop()s, ignoring its status
  Probe(const Probe&) = delete;
  Probe& operator=(const Probe&) = delete;

  // Begins dumping step first_step. Errors: InvalidArgument when another
  // probe is active or this one already is; IoError for the dump dir.
  Status Start();
  // Ends the current step (tensor files drained, dump.json written, or
  // queued with write_behind) and begins the next. Returns the first I/O
  // error of the step's files (with write_behind: the previous step's
  // dump.json); what was lost is also listed under "skipped" in the next
  // dump.json. The probe goes on after an error.
  Status Step();
  // Ends the current step, waits until every file is written, and removes
  // the callbacks. Idempotent.
  Status Stop();

  bool active() const;
  int64_t step() const;
  int64_t rank() const;
  // Entries recorded so far in the current step.
  int64_t entries_in_step() const;
  // Overflow task: overflowing entries kept; whether overflow_nums was
  // reached (the probe then records nothing more).
  int64_t overflow_count() const;
  bool terminated() const;

  // Level L0/mix: names modules by their path in `root` (named_modules), so
  // that ModuleScope entries read Module.conv1.Conv2d.forward.0, and hooks
  // every parameter's gradient (parameters_grad entries).
  void RegisterModel(const torch::nn::Module& root);

  // The same for a front end without torch::nn::Module (the Python probe),
  // by msprobe's module name prefix ("Module.layers.0.attn.Attention"):
  // hooks the gradients of `params` (the module's own parameters; those
  // that require grad) for its parameters_grad entries. ClearParameters
  // removes every such hook.
  void RegisterParameters(const std::string& module,
                          const std::vector<std::string>& names,
                          const std::vector<at::Tensor>& params);
  void ClearParameters();
  // One call of such a module: its inputs and own parameters now (returns
  // a token, -1 when nothing is recorded), its outputs at EndModuleCall,
  // which closes the call (operators between the two get it as their
  // parent in construct.json). Calls nest; each Begin needs its End.
  int64_t BeginModuleCall(
      const std::string& module, const std::vector<at::Tensor>& inputs,
      const std::vector<std::pair<std::string, at::Tensor>>& params);
  void EndModuleCall(int64_t token, const std::vector<at::Tensor>& outputs);

  // Records `value` as entry "{name}.{n}.debug" of the current step (n:
  // the name's calls in this step), as msprobe's debugger.save names it:
  // any tensor the training code wants compared (a loss, an activation),
  // summarized (and saved, in tensor mode) like an operator's output.
  void Save(const std::string& name, const at::Tensor& value);

  ProbeImpl* impl() { return impl_.get(); }

 private:
  explicit Probe(std::unique_ptr<ProbeImpl> impl);
  std::unique_ptr<ProbeImpl> impl_;
};

// Records one call of a module (level L0/mix): its inputs and parameters at
// construction, its outputs with SetOutputs. Operators run inside it get it
// as their parent in construct.json. Without an active probe, or at level
// L1, it only costs a pointer check.
//
//   lockstep::ModuleScope scope(probe, *conv1, {x});
//   auto y = conv1->forward(x);
//   scope.SetOutputs({y});
class ModuleScope {
 public:
  ModuleScope(Probe* probe, const torch::nn::Module& module,
              const std::vector<at::Tensor>& inputs);
  ~ModuleScope();
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

  void SetOutputs(const std::vector<at::Tensor>& outputs);

 private:
  ProbeImpl* impl_ = nullptr;
  int64_t token_ = -1;
};

// Stops a started probe when it goes out of scope.
class ProbeStopGuard {
 public:
  explicit ProbeStopGuard(Probe* probe) : probe_(probe) {}
  ~ProbeStopGuard() {
    if (probe_ != nullptr) (void)probe_->Stop();
  }
  ProbeStopGuard(const ProbeStopGuard&) = delete;
  ProbeStopGuard& operator=(const ProbeStopGuard&) = delete;

 private:
  Probe* probe_;
};

// Pauses (true) or resumes (false) the probe on the calling thread; pauses
// nest. While paused, the operators the thread calls are not entries: a
// framework's own bookkeeping around the model, such as the bucket set-up
// of DistributedDataParallel's forward (which reads buffers that are not
// yet written), that msprobe does not see either. Collectives the autograd
// engine runs (the bucketed all_reduce) are not affected.
void PauseProbeOnThisThread(bool paused);

// A call of a Python-level API (msprobe's name of it: "Tensor.__add__",
// "Functional.linear", "Torch.matmul") begins on the calling thread: the
// first operator it calls at the top level is the entry, under that name
// (with that name's own call count); the others it calls at the top level
// are not entries, as msprobe records one entry per API call. dump=false:
// none of them is an entry (an API the other run's probe does not dump).
// EndPythonApiCall ends it and returns how many operators it called at the
// top level. Calls do not nest: a Begin while one is open replaces it.
// args: the call's own arguments, encoded by lockstep_probe (_api_names.py
// _layout; "": the operator's arguments are recorded, as without a call).
void BeginPythonApiCall(std::string_view api, bool dump,
                        std::string_view args = "");
int EndPythonApiCall();

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_PROBE_H_
