// What a probe dumps: msprobe's config.json (docs/msprobe_reference.md
// §1.3–1.4) as a value, its parser, and the filters it implies (steps, ranks,
// scope, list, data_mode). No LibTorch here; the torch layer's Probe applies
// it.
//
// Thread safety: ProbeConfig is a value; ProbeFilter is not synchronized.
#ifndef LOCKSTEP_FORMAT_PROBE_CONFIG_H_
#define LOCKSTEP_FORMAT_PROBE_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

enum class ProbeTask {
  kStatistics,  // dtype, shape, Max, Min, Mean, Norm per tensor
  kTensor,      // statistics + every tensor as dump_tensor_data/*.pt
  kMd5,         // statistics + CRC-32 of each tensor's bytes ("md5")
  kOverflow,    // only entries whose outputs hold inf/nan, with tensors
  // statistics + sampled forward calls replayed in float64 as they run,
  // each output's error against its bound under the entry's "shadow" key
  // (lockstep replay reads it; no tensors saved)
  kShadow,
};
enum class ProbeLevel { kL0, kL1, kMix };
// How saved tensors are stored: one file each under dump_tensor_data/
// (msprobe's layout), .pt as torch.save writes it (the default: msprobe's
// PyTorch compare loads only .pt) or .npy, or one dump_tensor_data.pack per
// step and rank (format/tensor_pack.h; `lockstep export` makes msprobe's
// layout of it). config.json: "tensor_format": "pt" | "npy" | "pack" (a
// lockstep key).
enum class TensorFormat { kPt, kNpy, kPack };

// "pt", "npy", "pack". ParseTensorFormat: InvalidArgument for other names.
std::string_view TensorFormatName(TensorFormat f);
StatusOr<TensorFormat> ParseTensorFormat(std::string_view name);

std::string_view ProbeTaskName(ProbeTask t);    // "statistics", ...
std::string_view ProbeLevelName(ProbeLevel l);  // "L0", "L1", "mix"

struct ProbeConfig {
  std::string dump_path;
  ProbeTask task = ProbeTask::kStatistics;
  ProbeLevel level = ProbeLevel::kL1;
  std::vector<int64_t> steps;  // empty: every step
  std::vector<int64_t> ranks;  // empty: every rank
  // Two full entry names: dump the closed interval between them (in call
  // order); empty: no interval.
  std::vector<std::string> scope;
  // Full names, module names or substrings; empty: everything.
  std::vector<std::string> list;
  // data_mode: which directions and which sides are dumped.
  bool forward = true;
  bool backward = true;
  bool input = true;
  bool output = true;
  int64_t overflow_nums = 1;  // overflow task: stop after N; -1 = never
  // Shadow task: the share of the dumped forward calls that are replayed,
  // in (0, 1]; which calls is decided by ProbeFilter::Sampled.
  double sample_rate = 1;
  bool extra_info = true;  // stack.json and construct.json
  TensorFormat tensor_format = TensorFormat::kPt;
};

// Parses msprobe's config.json text. Accepts the common keys (task,
// dump_path, rank, step, level, extra_info; rank/step as ints or "4-6"
// ranges), lockstep's tensor_format, and the per-task sub-dict (scope,
// list, data_mode, summary_mode "md5" -> kMd5, overflow_nums, and the
// shadow task's sample_rate); task "overflow_check" -> kOverflow, "shadow"
// -> kShadow. msprobe's keys that lockstep does not use are ignored; a key
// neither knows is an error (ProbeConfigKeysProblem).
// Errors: Corruption for bad JSON, InvalidArgument naming the key for bad
// values (unknown task/level/data_mode, scope not of 2 names, ...).
StatusOr<ProbeConfig> ParseProbeConfig(std::string_view json_text,
                                       std::string_view subject);
StatusOr<ProbeConfig> LoadProbeConfig(const std::string& path);

// The config.json keys, stated once for C++ and Python (the Python probe
// asks this before it starts): "" when every key of the JSON object
// `json_text` and of its task sections is one that lockstep reads, that
// its Python front end reads (api_names, msprobe_apis), or that msprobe
// has and lockstep ignores (async_dump, free_benchmark, ...); else the
// problem, naming the key and the closest known one ("unknown config key
// 'dump_pth'; did you mean 'dump_path'?"). Bad JSON is a problem too.
std::string ProbeConfigKeysProblem(std::string_view json_text);

// Checks the values that a config built in code may get wrong.
Status ValidateProbeConfig(const ProbeConfig& c);

// "statistics", "tensor", "md5", "overflow_check" (or "overflow"),
// "shadow";
// "L0", "L1", "mix". Errors: InvalidArgument listing the accepted names.
StatusOr<ProbeTask> ParseProbeTask(std::string_view name);
StatusOr<ProbeLevel> ParseProbeLevel(std::string_view name);

// "4-6" -> {4, 5, 6}; "7" -> {7}. Errors: InvalidArgument.
StatusOr<std::vector<int64_t>> ParseIndexRange(std::string_view text);

// Decides entry by entry what a probe dumps under a config's filters.
class ProbeFilter {
 public:
  // Sorts c's steps and ranks: a config built in code may list them in
  // any order.
  explicit ProbeFilter(const ProbeConfig& c);

  bool StepWanted(int64_t step) const;
  bool RankWanted(int64_t rank) const;
  // Whether forward entry `name` (e.g. "Functional.linear.0.forward") is
  // dumped; `enclosing` lists the module entries it runs inside (a `list`
  // item naming a module selects everything inside it; an item
  // "aten::name" selects the calls of that ATen operator, any overload,
  // given as `aten`: "aten::add.Tensor"). Call once per forward entry, in
  // call order: the scope interval opens at its first name and closes
  // after its second.
  bool ForwardWanted(const std::string& name,
                     const std::vector<std::string>& enclosing = {},
                     std::string_view aten = {});
  // Shadow task: whether call `call` ("Functional.linear.0") of step `step`
  // is replayed. A hash of the two under sample_rate: the same calls in
  // every run, a different share of them in each step.
  bool Sampled(std::string_view call, int64_t step) const;
  // Whether the backward entry of a forward entry that was wanted is.
  bool BackwardWanted() const { return config_.backward; }
  bool InputsWanted() const { return config_.input; }
  bool OutputsWanted() const { return config_.output; }
  // Starts a new step: the scope interval closes.
  void ResetStep() {
    in_scope_ = false;
    scope_done_ = false;
  }

 private:
  bool ListMatches(const std::string& name) const;
  bool AtenListMatches(std::string_view aten) const;

  ProbeConfig config_;
  bool in_scope_ = false;
  bool scope_done_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_PROBE_CONFIG_H_
