#include "lockstep/format/probe_config.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/core/words.h"
#include "lockstep/format/json_reader.h"
#include "lockstep/format/pyvalue.h"

namespace lockstep {
namespace {

// config.json's keys: those lockstep reads (the Python front end reads
// api_names and msprobe_apis, and risk_level, which msprobe has too), and
// those msprobe has and lockstep accepts without using.
const std::vector<std::string>& TopKeys() {
  static const auto* keys = new std::vector<std::string>{
      "task", "dump_path", "level", "step", "rank", "extra_info",
      "tensor_format", "risk_level", "api_names", "msprobe_apis",
      // msprobe's, not used here
      "enable_dataloader", "async_dump", "seed", "is_deterministic",
      "precision", "framework", "acl_config", "online_run_ut", "nfs_path",
      "host", "port", "dump_enable", "custom_op_namespaces", "load"};
  return *keys;
}

// The task sections (each a dict of SectionKeys): lockstep's tasks, and
// msprobe's other tasks, accepted and not used.
const std::vector<std::string>& TaskSections() {
  static const auto* keys = new std::vector<std::string>{
      "statistics",     "tensor",         "md5",
      "overflow_check", "shadow",         "acc_check",
      "diff_check",     "nan_check",      "structure",
      "exception_dump", "free_benchmark", "run_ut",
      "grad_probe"};
  return *keys;
}

const std::vector<std::string>& SectionKeys() {
  static const auto* keys = new std::vector<std::string>{
      "scope", "list", "data_mode", "summary_mode", "overflow_nums",
      "sample_rate", "tensor_list",
      // msprobe's, not used here
      "file_format", "check_mode", "bench_path", "online_run_ut", "nfs_path",
      "host", "port", "error_data_path", "diff_nums", "white_list",
      "black_list", "fuzz_device", "pert_mode", "handler_type", "fuzz_level",
      "fuzz_stage", "if_preheat", "preheat_step", "max_sample", "grad_level",
      "param_list", "bounds"};
  return *keys;
}

bool Known(const std::vector<std::string>& keys, const std::string& key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::string UnknownKey(const std::string& key, const std::string& where,
                       const std::vector<std::string>& known) {
  std::string close = ClosestWord(key, known);
  return "unknown " + where + " '" + key + "'" +
         (close.empty() ? "" : "; did you mean '" + close + "'?");
}

// lockstep's own section keys: at the top level, ApplyTopLevel says where
// they belong.
bool OwnSectionKey(std::string_view key) {
  for (std::string_view k : {"scope", "list", "data_mode", "summary_mode",
                             "overflow_nums", "sample_rate"}) {
    if (key == k) return true;
  }
  return false;
}

std::string KeysProblem(const PyValue& root) {
  for (const auto& [key, v] : root.fields()) {
    if (Known(TaskSections(), key)) {
      if (v.kind() != PyValue::Kind::kDict) continue;  // the value's error
      for (const auto& [k, unused] : v.fields()) {
        if (!Known(SectionKeys(), k)) {
          return UnknownKey(k, "key in the '" + key + "' section",
                            SectionKeys());
        }
      }
    } else if (!Known(TopKeys(), key) && !OwnSectionKey(key)) {
      std::vector<std::string> all = TopKeys();
      all.insert(all.end(), TaskSections().begin(), TaskSections().end());
      return UnknownKey(key, "config key", all);
    }
  }
  return "";
}

Status Bad(std::string_view subject, std::string_view key,
           std::string_view problem) {
  return Status::InvalidArgument(
      std::string(subject) + ": '" + std::string(key) + "'", problem);
}

StatusOr<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) {
    return Status::InvalidArgument(std::string(s),
                                   "not a non-negative integer");
  }
  return v;
}

// rank/step: a list of ints and "a-b" strings, or one such string.
StatusOr<std::vector<int64_t>> ParseIndexList(const PyValue& v) {
  std::vector<int64_t> out;
  auto add = [&](const PyValue& item) -> Status {
    if (item.kind() == PyValue::Kind::kInt && item.as_int() >= 0) {
      out.push_back(item.as_int());
      return Status::Ok();
    }
    if (item.kind() == PyValue::Kind::kStr) {
      LOCKSTEP_ASSIGN_OR_RETURN(std::vector<int64_t> r,
                                ParseIndexRange(item.as_str()));
      out.insert(out.end(), r.begin(), r.end());
      return Status::Ok();
    }
    return Status::InvalidArgument(item.PyRepr(),
                                   "expected an int >= 0 or \"a-b\"");
  };
  if (v.kind() == PyValue::Kind::kList) {
    for (const PyValue& item : v.items()) LOCKSTEP_RETURN_IF_ERROR(add(item));
  } else {
    LOCKSTEP_RETURN_IF_ERROR(add(v));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

StatusOr<std::vector<std::string>> ParseStrList(const PyValue& v) {
  if (v.kind() != PyValue::Kind::kList) {
    return Status::InvalidArgument(v.PyRepr(), "expected a list of strings");
  }
  std::vector<std::string> out;
  for (const PyValue& item : v.items()) {
    if (item.kind() != PyValue::Kind::kStr) {
      return Status::InvalidArgument(item.PyRepr(), "expected a string");
    }
    out.push_back(item.as_str());
  }
  return out;
}

Status ApplyDataMode(const std::vector<std::string>& modes, ProbeConfig* c) {
  bool fwd = false, bwd = false, in = false, out = false;
  for (const std::string& m : modes) {
    if (m == "all") {
      fwd = bwd = in = out = true;
    } else if (m == "forward") {
      fwd = true;
    } else if (m == "backward") {
      bwd = true;
    } else if (m == "input") {
      in = true;
    } else if (m == "output") {
      out = true;
    } else {
      return Status::InvalidArgument(
          m, "unknown data_mode (all, forward, backward, input, output)");
    }
  }
  // As msprobe: a pair of which neither is named is allowed whole.
  if (!fwd && !bwd) fwd = bwd = true;
  if (!in && !out) in = out = true;
  c->forward = fwd;
  c->backward = bwd;
  c->input = in;
  c->output = out;
  return Status::Ok();
}

// The shadow task's share of calls replayed: a number in (0, 1].
Status ParseSampleRate(const PyValue& v, ProbeConfig* c) {
  if (c->task != ProbeTask::kShadow) {
    return Status::InvalidArgument(
        v.PyRepr(),
        "only task shadow samples calls. Note: remove it, or set "
        "\"task\": \"shadow\" with a \"shadow\" section");
  }
  if (!v.is_number()) {
    return Status::InvalidArgument(v.PyRepr(),
                                   "expected a number in (0, 1], e.g. 0.1");
  }
  double r = v.as_double();
  if (!(r > 0 && r <= 1)) {
    return Status::InvalidArgument(
        v.PyRepr(), "must be in (0, 1]: the share of calls replayed");
  }
  c->sample_rate = r;
  return Status::Ok();
}

Status ApplyTaskSection(const PyValue& section, std::string_view subject,
                        ProbeConfig* c) {
  for (const auto& [key, v] : section.fields()) {
    Status st;
    if (key == "scope") {
      StatusOr<std::vector<std::string>> s = ParseStrList(v);
      st = s.status();
      if (s.ok()) c->scope = *s;
    } else if (key == "list") {
      StatusOr<std::vector<std::string>> s = ParseStrList(v);
      st = s.status();
      if (s.ok()) c->list = *s;
    } else if (key == "data_mode") {
      StatusOr<std::vector<std::string>> s = ParseStrList(v);
      st = s.ok() ? ApplyDataMode(*s, c) : s.status();
    } else if (key == "summary_mode") {
      if (v.kind() == PyValue::Kind::kStr && v.as_str() == "md5") {
        c->task = ProbeTask::kMd5;
      } else if (v.kind() != PyValue::Kind::kStr ||
                 v.as_str() != "statistics") {
        st = Status::InvalidArgument(v.PyRepr(),
                                     "lockstep reads statistics or md5");
      }
    } else if (key == "sample_rate") {
      st = ParseSampleRate(v, c);
    } else if (key == "overflow_nums") {
      if (v.kind() != PyValue::Kind::kInt || v.as_int() < -1) {
        st = Status::InvalidArgument(v.PyRepr(), "expected an int >= -1");
      } else {
        c->overflow_nums = v.as_int();
      }
    }
    if (!st.ok()) return Bad(subject, key, st.message());
  }
  return Status::Ok();
}

Status ApplyTopLevel(const std::string& key, const PyValue& v, ProbeConfig* c) {
  auto need_str = [&]() -> Status {
    return v.kind() == PyValue::Kind::kStr
               ? Status::Ok()
               : Status::InvalidArgument(v.PyRepr(), "expected a string");
  };
  if (key == "task") {
    LOCKSTEP_RETURN_IF_ERROR(need_str());
    LOCKSTEP_ASSIGN_OR_RETURN(c->task, ParseProbeTask(v.as_str()));
  } else if (key == "level") {
    LOCKSTEP_RETURN_IF_ERROR(need_str());
    LOCKSTEP_ASSIGN_OR_RETURN(c->level, ParseProbeLevel(v.as_str()));
  } else if (key == "dump_path") {
    LOCKSTEP_RETURN_IF_ERROR(need_str());
    c->dump_path = v.as_str();
  } else if (key == "step") {
    LOCKSTEP_ASSIGN_OR_RETURN(c->steps, ParseIndexList(v));
  } else if (key == "rank") {
    LOCKSTEP_ASSIGN_OR_RETURN(c->ranks, ParseIndexList(v));
  } else if (key == "tensor_format") {
    LOCKSTEP_RETURN_IF_ERROR(need_str());
    LOCKSTEP_ASSIGN_OR_RETURN(c->tensor_format, ParseTensorFormat(v.as_str()));
  } else if (key == "scope" || key == "list" || key == "data_mode" ||
             key == "summary_mode" || key == "overflow_nums" ||
             key == "sample_rate") {
    // msprobe reads these from the task's section only; at the top level
    // they would be ignored without a word.
    std::string task = key == "sample_rate" ? "shadow" : "statistics";
    return Status::InvalidArgument(
        v.PyRepr(), "belongs in the task's section, e.g. {\"task\": \"" + task +
                        "\", \"" + task + "\": {\"" + key + "\": ...}}");
  } else if (key == "extra_info") {
    if (v.kind() != PyValue::Kind::kBool) {
      return Status::InvalidArgument(v.PyRepr(), "expected true or false");
    }
    c->extra_info = v.as_bool();
  }
  return Status::Ok();
}

}  // namespace

std::string_view ProbeTaskName(ProbeTask t) {
  switch (t) {
    case ProbeTask::kStatistics:
      return "statistics";
    case ProbeTask::kTensor:
      return "tensor";
    case ProbeTask::kMd5:
      return "statistics";  // msprobe: summary_mode md5
    case ProbeTask::kOverflow:
      return "overflow_check";
    case ProbeTask::kShadow:
      return "shadow";
  }
  return "statistics";
}

std::string_view ProbeLevelName(ProbeLevel l) {
  switch (l) {
    case ProbeLevel::kL0:
      return "L0";
    case ProbeLevel::kL1:
      return "L1";
    case ProbeLevel::kMix:
      return "mix";
  }
  return "L1";
}

StatusOr<ProbeTask> ParseProbeTask(std::string_view t) {
  if (t == "statistics") return ProbeTask::kStatistics;
  if (t == "tensor") return ProbeTask::kTensor;
  if (t == "md5") return ProbeTask::kMd5;
  if (t == "overflow" || t == "overflow_check") return ProbeTask::kOverflow;
  if (t == "shadow") return ProbeTask::kShadow;
  return Status::InvalidArgument(
      std::string(t),
      "unknown task (statistics, tensor, md5, overflow_check, shadow)");
}

std::string_view TensorFormatName(TensorFormat f) {
  switch (f) {
    case TensorFormat::kPt:
      return "pt";
    case TensorFormat::kNpy:
      return "npy";
    case TensorFormat::kPack:
      return "pack";
  }
  return "pt";
}

StatusOr<TensorFormat> ParseTensorFormat(std::string_view name) {
  for (TensorFormat f :
       {TensorFormat::kPt, TensorFormat::kNpy, TensorFormat::kPack}) {
    if (name == TensorFormatName(f)) return f;
  }
  return Status::InvalidArgument(std::string(name),
                                 "unknown tensor format (pt, npy, pack)");
}

StatusOr<ProbeLevel> ParseProbeLevel(std::string_view l) {
  if (l == "L0") return ProbeLevel::kL0;
  if (l == "L1") return ProbeLevel::kL1;
  if (l == "mix") return ProbeLevel::kMix;
  return Status::InvalidArgument(std::string(l), "unknown level (L0, L1, mix)");
}

StatusOr<std::vector<int64_t>> ParseIndexRange(std::string_view text) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) {
    LOCKSTEP_ASSIGN_OR_RETURN(int64_t v, ParseInt(text));
    return std::vector<int64_t>{v};
  }
  LOCKSTEP_ASSIGN_OR_RETURN(int64_t a, ParseInt(text.substr(0, dash)));
  LOCKSTEP_ASSIGN_OR_RETURN(int64_t b, ParseInt(text.substr(dash + 1)));
  if (b < a || b - a > 10000000) {
    return Status::InvalidArgument(std::string(text),
                                   "range must be a-b with a <= b");
  }
  std::vector<int64_t> out;
  for (int64_t i = a; i <= b; ++i) out.push_back(i);
  return out;
}

StatusOr<ProbeConfig> ParseProbeConfig(std::string_view json_text,
                                       std::string_view subject) {
  LOCKSTEP_ASSIGN_OR_RETURN(PyValue root, ParsePyJson(json_text, subject));
  if (root.kind() != PyValue::Kind::kDict) {
    return Status::Corruption(subject, "config.json must hold an object");
  }
  if (std::string problem = KeysProblem(root); !problem.empty())
    return Status::InvalidArgument(std::string(subject), problem);
  ProbeConfig c;
  for (const auto& [key, v] : root.fields()) {
    Status st = ApplyTopLevel(key, v, &c);
    if (!st.ok()) return Bad(subject, key, st.message());
  }
  // The sub-dict of the chosen task ("statistics" for md5 too).
  std::string section_key(ProbeTaskName(c.task));
  const PyValue* section = root.Find(section_key);
  if (section != nullptr) {
    if (section->kind() != PyValue::Kind::kDict) {
      return Bad(subject, section_key, "expected an object");
    }
    LOCKSTEP_RETURN_IF_ERROR(ApplyTaskSection(*section, subject, &c));
  }
  Status st = ValidateProbeConfig(c);
  if (!st.ok()) return st.WithContext(subject);
  return c;
}

std::string ProbeConfigKeysProblem(std::string_view json_text) {
  StatusOr<PyValue> root = ParsePyJson(json_text, "config");
  if (!root.ok()) return root.status().message();
  if (root->kind() != PyValue::Kind::kDict)
    return "config.json must hold an object";
  return KeysProblem(*root);
}

StatusOr<ProbeConfig> LoadProbeConfig(const std::string& path) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseProbeConfig(text, path);
}

Status ValidateProbeConfig(const ProbeConfig& c) {
  if (c.dump_path.empty()) {
    return Status::InvalidArgument("dump_path",
                                   "is empty. Note: say where "
                                   "the dump goes");
  }
  if (!c.scope.empty() && c.scope.size() != 2) {
    return Status::InvalidArgument(
        "scope", "must hold exactly 2 entry names (first and last)");
  }
  if (!(c.sample_rate > 0 && c.sample_rate <= 1)) {
    return Status::InvalidArgument(
        "sample_rate", "must be in (0, 1]: the share of calls replayed");
  }
  if (c.overflow_nums < -1 || c.overflow_nums == 0) {
    return Status::InvalidArgument("overflow_nums",
                                   "must be >= 1, or -1 for no limit");
  }
  return Status::Ok();
}

ProbeFilter::ProbeFilter(const ProbeConfig& c) : config_(c) {
  std::sort(config_.steps.begin(), config_.steps.end());
  std::sort(config_.ranks.begin(), config_.ranks.end());
}

bool ProbeFilter::StepWanted(int64_t step) const {
  return config_.steps.empty() ||
         std::binary_search(config_.steps.begin(), config_.steps.end(), step);
}

bool ProbeFilter::RankWanted(int64_t rank) const {
  return config_.ranks.empty() ||
         std::binary_search(config_.ranks.begin(), config_.ranks.end(), rank);
}

bool ProbeFilter::ListMatches(const std::string& name) const {
  for (const std::string& item : config_.list) {
    if (name.find(item) != std::string::npos) return true;
  }
  return false;
}

bool ProbeFilter::AtenListMatches(std::string_view aten) const {
  if (aten.empty()) return false;
  std::string_view op = aten.substr(0, aten.find('.'));  // any overload
  for (const std::string& item : config_.list) {
    if (item == aten || item == op) return true;
  }
  return false;
}

bool ProbeFilter::Sampled(std::string_view call, int64_t step) const {
  if (config_.sample_rate >= 1) return true;
  // FNV-1a of the name, the step mixed in, then SplitMix64's finalizer:
  // the same on every platform and run.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char ch : call) {
    h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
  }
  h ^= static_cast<uint64_t>(step) * 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  double u = static_cast<double>(h >> 11) * 0x1p-53;  // [0, 1)
  return u < config_.sample_rate;
}

bool ProbeFilter::ForwardWanted(const std::string& name,
                                const std::vector<std::string>& enclosing,
                                std::string_view aten) {
  if (!config_.forward && !config_.backward) return false;
  if (config_.scope.size() == 2) {
    if (scope_done_) return false;
    if (!in_scope_ && name == config_.scope[0]) in_scope_ = true;
    if (!in_scope_) return false;
    if (name == config_.scope[1]) {
      in_scope_ = false;
      scope_done_ = true;
    }
  }
  if (config_.list.empty() || ListMatches(name) || AtenListMatches(aten)) {
    return true;
  }
  for (const std::string& m : enclosing) {
    if (ListMatches(m)) return true;
  }
  return false;
}

}  // namespace lockstep
