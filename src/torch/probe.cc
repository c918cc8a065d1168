#include "lockstep/torch/probe.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/core/log.h"
#include "lockstep/torch/env_capture.h"
#include "torch/probe_impl.h"

namespace lockstep {
namespace {

std::atomic<uint64_t> g_sessions{0};

int64_t RankFromEnv() {
  const char* r = std::getenv("RANK");
  if (r == nullptr || *r == '\0') return 0;
  char* end = nullptr;
  long long v = std::strtoll(r, &end, 10);
  return (*end == '\0' && v >= 0) ? v : 0;
}

DumpWriterOptions WriterOptions(const ProbeConfig& c) {
  DumpWriterOptions o;
  o.task = std::string(ProbeTaskName(c.task));
  o.level = std::string(ProbeLevelName(c.level));
  o.framework = "pytorch";
  o.write_stack_json = false;  // unless ProbeOptions::stack_frames
  // L1 has no module parents: msprobe writes an empty construct.json there;
  // lockstep saves the file (one file per step less).
  o.write_construct_json = c.extra_info && c.level != ProbeLevel::kL1;
  o.root = c.dump_path;  // step and rank directories never through a link
  o.pack_tensors = c.tensor_format == TensorFormat::kPack;
  o.tensor_file = c.tensor_format == TensorFormat::kNpy ? TensorFileFormat::kNpy
                                                        : TensorFileFormat::kPt;
  return o;
}

}  // namespace

ProbeImpl::ProbeImpl(ProbeConfig config, ProbeOptions options)
    : config_(std::move(config)),
      options_(options),
      filter_(config_),
      files_(std::make_unique<BackgroundWriter>(options.writer_queue_bytes)),
      summarizer_(SummaryMode{config_.task == ProbeTask::kTensor,
                              config_.task == ProbeTask::kMd5,
                              options.device_style_stats},
                  files_.get()) {
  rank_ = options_.rank >= 0 ? options_.rank : RankFromEnv();
}

ProbeImpl::~ProbeImpl() {
  (void)Stop();
  std::lock_guard<std::mutex> lock(mu_);
  RemoveParamHooks();
}

namespace {

// A dump of an earlier run under `dump_path` for `rank` (step*/rank{R}
// holding dump.json or tensors): this run would mix with it. Returns the
// steps found ("step0, step1, ... (50 steps)"), or "" when there is none.
std::string EarlierDumpSteps(const std::string& dump_path, int64_t rank) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> steps;
  for (const auto& e : fs::directory_iterator(dump_path, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("step", 0) != 0) continue;
    fs::path r = e.path() / ("rank" + std::to_string(rank));
    if (fs::exists(r / "dump.json", ec) ||
        fs::exists(r / "dump_tensor_data", ec) ||
        fs::exists(r / kPackFileName, ec))
      steps.push_back(name);
  }
  if (steps.empty()) return "";
  std::sort(steps.begin(), steps.end());
  std::string out;
  for (size_t i = 0; i < steps.size() && i < 3; ++i)
    out += (i ? ", " : "") + steps[i];
  if (steps.size() > 3) out += ", ...";
  return out + " (" + std::to_string(steps.size()) + " step" +
         (steps.size() > 1 ? "s" : "") + ")";
}

}  // namespace

Status ProbeImpl::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_) return Status::InvalidArgument("probe", "already started");
  ProbeImpl* expected = nullptr;
  if (!g_active_probe.compare_exchange_strong(expected, this)) {
    return Status::InvalidArgument(
        "probe",
        "another probe is active in this process. Note: Stop() it "
        "first");
  }
  if (filter_.RankWanted(rank_) && started_on_ != config_.dump_path) {
    std::string earlier = EarlierDumpSteps(config_.dump_path, rank_);
    if (!earlier.empty()) {
      g_active_probe.store(nullptr, std::memory_order_release);
      return Status::InvalidArgument(
          config_.dump_path,
          "holds an earlier dump of rank " + std::to_string(rank_) + ": " +
              earlier +
              "; this run's steps would mix with it. Note: dump into an "
              "empty directory, or remove the old dump");
    }
  }
  started_on_ = config_.dump_path;
  session_ = ++g_sessions;
  active_ = true;
  terminated_ = false;
  overflow_count_ = 0;
  step_ = options_.first_step;
  ResetProbeDepth();
  Status st = Status::Ok();
  // One env.json per dump: written by the first rank that is dumped.
  int64_t first_rank = config_.ranks.empty() ? 0 : config_.ranks.front();
  if (options_.write_env && rank_ == first_rank && filter_.RankWanted(rank_)) {
    EnvCaptureOptions env;
    env.model = root_;
    env.run = options_.run_info;
    st = CreateDirs(config_.dump_path);
    if (st.ok()) st = WriteEnvFingerprint(config_.dump_path, env);
  }
  if (level_has_ops()) callback_ = AddProbeCallbacks();
  if (st.ok()) st = BeginStep(/*first=*/true);
  if (!st.ok()) {  // roll back: nothing stays registered
    if (callback_ != 0) at::removeCallback(callback_);
    callback_ = 0;
    writer_.reset();
    active_ = false;
    g_active_probe.store(nullptr, std::memory_order_release);
  }
  return st;
}

Status ProbeImpl::BeginStep(bool first) {
  api_calls_.Reset();
  module_calls_.Reset();
  grad_calls_.Reset();
  debug_calls_.Reset();
  // A module call still open at a step's end was cut short (its forward
  // raised, and the exception was caught): it is no one's parent in the
  // next step.
  open_modules_.clear();
  module_stack_.clear();
  filter_.ResetStep();
  entries_in_step_ = 0;
  for (ParamGrads& g : param_groups_) {  // a backward cut by the step end
    g.grads.assign(g.grads.size(), std::string());
    g.arrived = 0;
  }
  bool wanted =
      filter_.StepWanted(step_) && filter_.RankWanted(rank_) && !terminated_;
  if (callback_ != 0) {
    if (wanted) {
      at::reenableCallback(callback_);
    } else {
      at::disableCallback(callback_);  // nothing to pay on skipped steps
    }
  }
  if (!wanted) return Status::Ok();
  std::string dir = config_.dump_path + "/step" + std::to_string(step_) +
                    "/rank" + std::to_string(rank_);
  DumpWriterOptions o = WriterOptions(config_);
  o.write_stack_json = config_.extra_info && options_.stack_frames;
  o.make_dir_lazily = !first;
  step_stacks_.clear();
  LOCKSTEP_ASSIGN_OR_RETURN(writer_, DumpWriter::Create(dir, std::move(o)));
  summarizer_.set_dump_writer(writer_.get());
  if (disk_full_step_ >= 0 && config_.task == ProbeTask::kTensor) {
    NoteSkip("dump_tensor_data",
             "tensor files not saved: the disk was found full at step " +
                 std::to_string(disk_full_step_) +
                 " (the entries keep their statistics)",
             /*warn=*/false);
  }
  // dump.json is written once, when the step ends (after the step's tensor
  // files): a step killed half-way leaves no dump.json, so every dump.json
  // on disk is a whole step.
  return Status::Ok();
}

Status ProbeImpl::CollectWrites() {
  std::vector<BackgroundWriter::Failure> failed;
  Status st = files_->Drain(&failed);
  if (dump_json_disk_full_->exchange(false))
    NoteWriteFailure(std::strerror(ENOSPC));  // a dump.json made room
  for (BackgroundWriter::Failure& f : failed) {
    NoteWriteFailure(f.reason);
    // The Status reports these; no warning per file.
    if (f.task) {  // an earlier step's dump.json
      NoteFailedDumpJson(std::move(f.path), f.reason);
    } else {
      NoteSkip(std::filesystem::path(f.path).filename().string(),
               "tensor file not written: " + f.reason, /*warn=*/false);
    }
  }
  return st;
}

namespace {

// Whether a write failed for want of space.
bool IsDiskFull(const std::string& why) {
  return why.find(std::strerror(ENOSPC)) != std::string::npos ||
         why.find(std::strerror(EDQUOT)) != std::string::npos;
}

// Removes a rank dir and its step dir if they are empty.
void RemoveStepDirIfEmpty(const std::string& rank_dir) {
  std::error_code ec;
  std::filesystem::remove(rank_dir, ec);
  std::filesystem::remove(std::filesystem::path(rank_dir).parent_path(), ec);
}

// Both failures, the worse (`first`) first.
Status Both(const Status& first, const Status& second) {
  if (first.ok()) return second;
  if (second.ok()) return first;
  return Status::IoError(first.message(), "also " + second.message());
}

// One step's dump.json (and construct.json), encoded and written after the
// step's tensor files: at the step's end, or on the writer thread with
// ProbeOptions::write_behind.
struct StepWrite {
  std::unique_ptr<DumpWriter> writer;
  // Set when the disk was full (even if dump.json then fit).
  std::shared_ptr<std::atomic<bool>> disk_full;
  std::vector<std::string> names;
  std::vector<std::string> values;  // JSON at DumpWriter::kEntryLevel
  std::vector<std::pair<std::string, std::string>> parents;
  std::vector<std::pair<std::string, StackFrames>> stacks;
  PyValue skipped;  // None: nothing skipped

  Status Write() {
    for (size_t i = 0; i < values.size(); ++i) {
      writer->AddEncodedEntry(names[i], std::move(values[i]));
    }
    for (const auto& [name, parent] : parents) {
      writer->SetParent(name,
                        parent.empty() ? PyValue() : PyValue::Str(parent));
    }
    // Most names share their frames with another (the same line called
    // in a loop, the same call in every step): those are added by the
    // first name seen with them, without comparing frames again.
    std::unordered_map<const std::vector<std::string>*, const std::string*>
        first;
    for (const auto& [name, frames] : stacks) {
      auto [it, fresh] = first.try_emplace(frames.get(), &name);
      if (fresh) {
        writer->AddStack(name, *frames);
      } else {
        writer->AddStackOf(name, *it->second);
      }
    }
    if (!skipped.is_none()) writer->SetExtra("skipped", skipped);
    Status st = writer->Flush();
    if (st.ok() || !IsDiskFull(st.message())) return st;
    disk_full->store(true);
    // The disk is full. Without dump.json the step's tensor files are of no
    // use to anyone (nothing names them): remove them to make room, say so
    // in dump.json, and try again.
    size_t removed = writer->RemoveTensors();
    if (removed > 0) {
      std::vector<PyValue> items =
          skipped.is_none() ? std::vector<PyValue>() : skipped.items();
      items.push_back(PyValue::Dict(
          {{"name", PyValue::Str("dump_tensor_data")},
           {"reason",
            PyValue::Str(std::to_string(removed) +
                         " tensor files of this step removed: the disk was "
                         "full and this dump.json had to fit (the entries "
                         "keep their statistics; the files their data_name "
                         "names are gone)")}}));
      writer->SetExtra("skipped", PyValue::List(std::move(items)));
      st = writer->Flush();
      if (st.ok()) return st;
    }
    // Not even dump.json fits: leave no directory that looks like a step.
    RemoveStepDirIfEmpty(writer->dir());
    return st;
  }
};

}  // namespace

Status ProbeImpl::EndStep(bool drop_if_empty) {
  if (writer_ == nullptr) return Status::Ok();
  Status st = CollectWrites();
  st = Both(st, summarizer_.TakeError());
  FlushBackwards();
  summarizer_.Resolve(&pending_);
  summarizer_.ClearCache();
  for (TensorSummarizer::Skip& s : summarizer_.TakeSkips()) {
    NoteSkip(std::move(s.what), std::move(s.why));
  }
  summarizer_.set_dump_writer(nullptr);
  if (disk_full_step_ == step_ && config_.task == ProbeTask::kTensor) {
    // The disk filled during this step: some of its tensor files are
    // missing anyway. Removing the rest makes room for the statistics of
    // this step and the later ones, which matter more than a partial step.
    size_t removed = writer_->RemoveTensors();
    if (removed > 0) {
      NoteSkip("dump_tensor_data",
               std::to_string(removed) +
                   " tensor files of this step removed: the disk filled "
                   "during this step, and without them the statistics of "
                   "this step and the later ones fit (the entries keep "
                   "their statistics; the files their data_name names are "
                   "gone)",
               /*warn=*/false);
    }
  }
  if (disk_full_step_ >= 0 && disk_full_step_ < step_ &&
      config_.task == ProbeTask::kTensor && !pending_.empty()) {
    st = Both(st, Status::IoError(
                      writer_->dir(),
                      "tensor files not saved: the disk was found full at "
                      "step " +
                          std::to_string(disk_full_step_) +
                          " (this step keeps statistics only)"));
  }
  if (drop_if_empty && pending_.empty() && skipped_.empty()) {
    // A step begun but never run (Stop right after the last Step): no
    // dump.json; Stop removes its empty directory.
    writer_.reset();
    return st;
  }
  auto job = std::make_shared<StepWrite>();
  job->writer = std::move(writer_);
  job->disk_full = dump_json_disk_full_;
  job->names.swap(pending_names_);
  job->values.swap(pending_);
  job->parents.swap(parents_);
  job->stacks.swap(step_stacks_);
  if (!skipped_.empty()) job->skipped = SkippedValue();
  skipped_.clear();
  skipped_more_ = 0;
  std::string what = "step" + std::to_string(step_) + "/rank" +
                     std::to_string(rank_) + "/dump.json";
  if (options_.write_behind) {
    files_->EnqueueTask(std::move(what), [job] { return job->Write(); });
    return st;
  }
  // The step's tensor files are written (CollectWrites above waited for
  // them): dump.json is written here, without a hand-off to the writer
  // thread and back.
  Status written = job->Write();
  if (!written.ok()) {
    NoteWriteFailure(written.message());
    NoteFailedDumpJson(std::move(what), written.message());
  }
  return Both(st, written);
}

bool ProbeImpl::StackWanted(const std::string& name) {
  if (!options_.stack_frames || !config_.extra_info) return false;
  auto it = stacks_by_name_.find(name);
  if (it == stacks_by_name_.end()) return true;
  step_stacks_.emplace_back(name, it->second);
  return false;
}

void ProbeImpl::TakeStack(const std::string& name) {
  std::vector<std::string> frames;
  try {
    frames = options_.stack_frames();
  } catch (const std::exception& e) {
    frames = {"(stack not read: " + ExceptionText(e) + ")"};
  }
  std::string key;  // identical frames share one vector (StepWrite)
  for (const std::string& f : frames) key.append(f).push_back('\0');
  std::lock_guard<std::mutex> lock(mu_);
  StackFrames& shared = interned_frames_[key];
  if (shared == nullptr) {
    shared =
        std::make_shared<const std::vector<std::string>>(std::move(frames));
  }
  stacks_by_name_.emplace(name, shared);
  if (writer_ != nullptr) step_stacks_.emplace_back(name, shared);
}

void ProbeImpl::NoteWriteFailure(const std::string& why) {
  if (disk_full_step_ >= 0 || !IsDiskFull(why)) return;
  disk_full_step_ = step_;
  summarizer_.disable_files();
  LogWarning("lockstep probe: the disk is full (found at step " +
             std::to_string(step_) + "): " + why +
             "; tensor files are no longer saved: later steps keep their "
             "statistics only (each dump.json says so under \"skipped\"; a "
             "dump.json that does not fit either is named by the probe's "
             "Status)");
}

void ProbeImpl::NoteFailedDumpJson(std::string what, const std::string& why) {
  if (lost_dumps_.count++ == 0) {
    lost_dumps_.first = what;
    lost_dumps_.why = why;
  }
  lost_dumps_.last = what;
  // The Status of the failed Step/Stop reports it; the next dump.json lists
  // it.
  NoteSkip(std::move(what),
           "not written: " + why + " (that step's entries are lost)",
           /*warn=*/false);
}

void ProbeImpl::NoteSkip(std::string what, std::string why, bool warn) {
  if (warn && warned_.size() < 64 && warned_.insert(why).second) {
    LogWarning("lockstep probe: skipped " + what + ": " + why +
               " (listed under \"skipped\" in dump.json; further skips "
               "for this reason are not logged)");
  }
  if (skipped_.size() < kMaxSkipNotes) {
    skipped_.push_back(SkipNote{std::move(what), std::move(why)});
  } else {
    ++skipped_more_;
  }
}

PyValue ProbeImpl::SkippedValue() const {
  std::vector<PyValue> items;
  items.reserve(skipped_.size() + 1);
  for (const SkipNote& n : skipped_) {
    items.push_back(PyValue::Dict(
        {{"name", PyValue::Str(n.what)}, {"reason", PyValue::Str(n.why)}}));
  }
  if (skipped_more_ > 0) {
    items.push_back(
        PyValue::Dict({{"name", PyValue::Str("...")},
                       {"reason", PyValue::Str(std::to_string(skipped_more_) +
                                               " more skips not listed")}}));
  }
  return PyValue::List(std::move(items));
}

std::string ProbeImpl::ExceptionText(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) {
    return c10->what_without_backtrace();
  }
  return e.what();
}

void ProbeImpl::AddEntry(std::string name, std::string text) {
  if (config_.level == ProbeLevel::kMix || config_.level == ProbeLevel::kL0) {
    parents_.emplace_back(name,
                          module_stack_.empty() ? "" : module_stack_.back());
  }
  pending_names_.push_back(std::move(name));
  pending_.push_back(std::move(text));
  ++entries_in_step_;
}

Status ProbeImpl::Step() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_) return Status::InvalidArgument("probe", "not started");
  Status st = EndStep();
  ++step_;
  Status begun = BeginStep();
  if (st.ok()) st = begun;
  return st;
}

Status ProbeImpl::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!active_) return Status::Ok();
  if (callback_ != 0) {
    at::removeCallback(callback_);
    callback_ = 0;
  }
  std::string last_dir = writer_ == nullptr ? "" : writer_->dir();
  Status st = EndStep(/*drop_if_empty=*/true);
  // The last dump.json is on disk (or failed) when Stop returns.
  st = Both(CollectWrites(), st);
  // A last step dropped as empty, or whose dump.json failed, leaves no
  // empty directory.
  if (!last_dir.empty()) RemoveStepDirIfEmpty(last_dir);
  if (lost_dumps_.count > 1) {  // one alone is in `st` already
    st = Both(Status::IoError(
                  "probe", std::to_string(lost_dumps_.count) +
                               " dump.json files not written (" +
                               lost_dumps_.first + " to " + lost_dumps_.last +
                               "; their steps' entries are lost), the first: " +
                               lost_dumps_.why),
              st);
  }
  lost_dumps_ = LostDumps();
  skipped_.clear();  // nowhere left to say them; the Status does
  skipped_more_ = 0;
  active_ = false;
  g_active_probe.store(nullptr, std::memory_order_release);
  return st;
}

Probe::Probe(std::unique_ptr<ProbeImpl> impl) : impl_(std::move(impl)) {}
Probe::~Probe() = default;

StatusOr<std::unique_ptr<Probe>> Probe::Create(ProbeConfig config,
                                               ProbeOptions options) {
  LOCKSTEP_RETURN_IF_ERROR(ValidateProbeConfig(config));
  return std::unique_ptr<Probe>(
      new Probe(std::make_unique<ProbeImpl>(std::move(config), options)));
}

Status Probe::Start() { return impl_->Start(); }
Status Probe::Step() { return impl_->Step(); }
Status Probe::Stop() { return impl_->Stop(); }
bool Probe::active() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->active_;
}
int64_t Probe::step() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->step_;
}
int64_t Probe::rank() const { return impl_->rank_; }
int64_t Probe::entries_in_step() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->entries_in_step_;
}
int64_t Probe::overflow_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->overflow_count_;
}
bool Probe::terminated() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->terminated_;
}
void Probe::RegisterModel(const torch::nn::Module& root) {
  impl_->RegisterModel(root);
}

}  // namespace lockstep
