#include "lockstep/format/dump_writer.h"

#include <filesystem>
#include <utility>

#include "format/str_cat.h"
#include "lockstep/core/file.h"
#include "lockstep/format/json_writer.h"

namespace lockstep {
namespace {

constexpr int kIndent = 1;  // msprobe: json.dump(..., indent=1)

// The top-level keys before "data", in msprobe's order.
struct DumpHeader {
  std::string_view task;
  std::string_view level;
  const std::string* framework = nullptr;  // null: key left out
  std::string_view dump_data_dir;          // "": null
  const std::vector<std::pair<std::string, PyValue>>* extra = nullptr;
};

// `"name": ` of a dict member; its value follows.
void AppendMemberKey(std::string_view name, std::string* out) {
  AppendPyJsonString(name, out);
  *out += ": ";
}

// A top-level key on its own line.
void AppendKey(std::string_view key, std::string* out) {
  *out += "\n ";
  AppendMemberKey(key, out);
}

// `{` ... `"data": ` — the document up to the data dict.
void AppendHead(const DumpHeader& h, std::string* out) {
  *out += '{';
  AppendKey("task", out);
  AppendPyJsonString(h.task, out);
  *out += ',';
  AppendKey("level", out);
  AppendPyJsonString(h.level, out);
  *out += ',';
  if (h.framework) {
    AppendKey("framework", out);
    AppendPyJsonString(*h.framework, out);
    *out += ',';
  }
  AppendKey("dump_data_dir", out);
  if (h.dump_data_dir.empty()) {
    *out += "null";
  } else {
    AppendPyJsonString(h.dump_data_dir, out);
  }
  *out += ',';
  if (h.extra) {
    for (const auto& [key, value] : *h.extra) {
      AppendKey(key, out);
      AppendPyJson(value, kIndent, 1, out);
      *out += ',';
    }
  }
  AppendKey("data", out);
}

// Closes the document after the data dict's members (n of them were
// appended, each preceded by OpenMember).
void AppendTail(size_t n, std::string* out) {
  *out += n == 0 ? "{}\n}" : "\n }\n}";
}

void OpenMember(size_t i, std::string* out) {
  *out += i == 0 ? "{\n  " : ",\n  ";
}

bool IsSafeStem(std::string_view stem) {
  return !stem.empty() && stem != "." && stem != ".." &&
         stem.find_first_of(std::string_view("/\0", 2)) ==
             std::string_view::npos;
}

}  // namespace

std::string EncodeDumpJson(const DumpFile& dump) {
  DumpHeader h{dump.task, dump.level,
               dump.framework_given ? &dump.framework : nullptr,
               dump.dump_data_dir, &dump.extra};
  std::string out;
  AppendHead(h, &out);
  for (size_t i = 0; i < dump.entries.size(); ++i) {
    OpenMember(i, &out);
    AppendMemberKey(dump.entries[i].name, &out);
    AppendPyJson(dump.entries[i].value, kIndent, DumpWriter::kEntryLevel, &out);
  }
  AppendTail(dump.entries.size(), &out);
  return out;
}

Status WriteDumpJson(const std::string& path, const DumpFile& dump) {
  return WriteFileAtomic(path, EncodeDumpJson(dump));
}

namespace {

// `dir`, made under `root` without following links when `dir` lies there.
Status MakeDirs(const std::string& root, const std::string& dir) {
  if (!root.empty() && dir.size() > root.size() &&
      dir.compare(0, root.size(), root) == 0 && dir[root.size()] == '/') {
    return CreateDirsUnder(root, dir);
  }
  return CreateDirs(dir);
}

}  // namespace

DumpWriter::DumpWriter(std::string dir, DumpWriterOptions options)
    : dir_(std::move(dir)), options_(std::move(options)) {}

DumpWriter::~DumpWriter() {
  if (pack_ != nullptr) pack_->Abandon();
}

StatusOr<std::unique_ptr<DumpWriter>> DumpWriter::Create(
    const std::string& rank_dir, DumpWriterOptions options) {
  if (!options.make_dir_lazily) {
    LOCKSTEP_RETURN_IF_ERROR(MakeDirs(options.root, rank_dir));
  }
  return std::unique_ptr<DumpWriter>(
      new DumpWriter(rank_dir, std::move(options)));
}

void DumpWriter::AddEntry(const std::string& name, const PyValue& value) {
  std::string text;
  AppendPyJson(value, kIndent, kEntryLevel, &text);
  AddEncodedEntry(name, std::move(text));
}

void DumpWriter::AddEncodedEntry(const std::string& name,
                                 std::string value_text) {
  auto it = index_.find(name);
  if (it != index_.end()) {
    pieces_[it->second].live = false;
    pieces_[it->second].value.clear();
    index_.erase(it);
  }
  Piece p{name, std::move(value_text), true};
  index_[name] = pieces_.size();
  pieces_.push_back(std::move(p));
  if (pieces_.size() > 64 && pieces_.size() > 2 * index_.size()) {  // compact
    std::vector<Piece> live;
    live.reserve(index_.size());
    for (auto& q : pieces_) {
      if (q.live) {
        index_[q.name] = live.size();
        live.push_back(std::move(q));
      }
    }
    pieces_ = std::move(live);
  }
}

StatusOr<DumpWriter::TensorTarget> DumpWriter::TensorTargetFor(
    std::string_view stem) {
  if (!IsSafeStem(stem)) {
    return Status::InvalidArgument(
        StrCat("tensor name '", stem, "'"),
        "not a file name (empty, '.', '..', or has '/' or NUL)");
  }
  TensorFileFormat format =
      options_.pack_tensors ? TensorFileFormat::kNpy : options_.tensor_file;
  TensorTarget target{"", nullptr, StrCat(stem, TensorFileExtension(format))};
  if (options_.pack_tensors) {
    if (pack_ == nullptr) {
      if (saved_tensors_) {
        return Status::InvalidArgument(dir_,
                                       "the pack was finished or dropped");
      }
      LOCKSTEP_RETURN_IF_ERROR(MakeDirs(options_.root, dir_));
      LOCKSTEP_ASSIGN_OR_RETURN(
          pack_,
          PackWriter::Create(StrCat(dir_, "/", kPackFileName), options_.npy));
    }
    saved_tensors_ = true;
    target.pack = pack_;
    return target;
  }
  std::string data_dir = dir_ + "/dump_tensor_data";
  if (!saved_tensors_)
    LOCKSTEP_RETURN_IF_ERROR(MakeDirs(options_.root, data_dir));
  saved_tensors_ = true;
  target.path = StrCat(data_dir, "/", target.data_name);
  return target;
}

StatusOr<std::string> DumpWriter::SaveTensor(std::string_view stem,
                                             const Tensor& t) {
  LOCKSTEP_ASSIGN_OR_RETURN(TensorTarget target, TensorTargetFor(stem));
  if (target.pack != nullptr) {
    LOCKSTEP_RETURN_IF_ERROR(target.pack->Append(target.data_name, t));
  } else {
    LOCKSTEP_RETURN_IF_ERROR(WriteTensorFile(target.path, t, options_.npy));
  }
  return std::move(target.data_name);
}

size_t DumpWriter::RemoveTensors() {
  if (pack_ != nullptr) {
    size_t n = pack_->Abandon();
    pack_.reset();
    return n;
  }
  std::error_code ec;
  std::filesystem::path data = std::filesystem::path(dir_) / "dump_tensor_data";
  size_t removed = 0;
  for (std::filesystem::directory_iterator it(data, ec), end; !ec && it != end;
       it.increment(ec)) {
    // Through the Env, as they were written (a test's full disk gets the
    // bytes back).
    removed += RemoveFileIfPresent(it->path().string()).ok();
  }
  std::filesystem::remove(data, ec);
  return removed;
}

void DumpWriter::AddStack(const std::string& name,
                          const std::vector<std::string>& frames) {
  if (stack_of_name_.count(name)) return;
  std::string key;
  for (const auto& f : frames) {
    key += f;
    key += '\0';
  }
  auto [it, inserted] =
      stack_of_frames_.emplace(std::move(key), stacks_.size());
  if (inserted) stacks_.push_back(StackGroup{{}, frames});
  stacks_[it->second].names.push_back(name);
  stack_of_name_[name] = it->second;
  stack_dirty_ = true;
}

void DumpWriter::AddStackOf(const std::string& name,
                            const std::string& same_as) {
  auto it = stack_of_name_.find(same_as);
  if (it == stack_of_name_.end() || stack_of_name_.count(name)) return;
  size_t group = it->second;
  stacks_[group].names.push_back(name);
  stack_of_name_[name] = group;
  stack_dirty_ = true;
}

void DumpWriter::SetParent(const std::string& name, const PyValue& parent) {
  auto [it, inserted] = construct_index_.emplace(name, construct_.size());
  if (inserted) {
    construct_.emplace_back(name, parent);
  } else {
    construct_[it->second].second = parent;
  }
  construct_dirty_ = true;
}

std::string DumpWriter::DumpJsonText() const {
  std::string data_dir;  // msprobe: where the tensor files are; packed: null
  if (saved_tensors_ && !options_.pack_tensors) {
    std::error_code ec;
    auto abs = std::filesystem::absolute(dir_ + "/dump_tensor_data", ec);
    data_dir =
        ec ? dir_ + "/dump_tensor_data" : abs.lexically_normal().string();
  }
  DumpHeader h{options_.task, options_.level,
               options_.framework.empty() ? nullptr : &options_.framework,
               data_dir, extra_.empty() ? nullptr : &extra_};
  size_t bytes = 256;
  for (const auto& p : pieces_) bytes += p.name.size() + p.value.size() + 8;
  std::string out;
  out.reserve(bytes);
  AppendHead(h, &out);
  size_t n = 0;
  for (const auto& p : pieces_) {
    if (!p.live) continue;
    OpenMember(n++, &out);
    AppendMemberKey(p.name, &out);
    AppendExpandingLateFloats(p.value, &out);
  }
  AppendTail(n, &out);
  return out;
}

void DumpWriter::SetExtra(const std::string& key, PyValue value) {
  for (auto& [k, v] : extra_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  extra_.emplace_back(key, std::move(value));
}

std::string DumpWriter::StackJsonText() const {
  std::vector<std::pair<std::string, PyValue>> groups;
  groups.reserve(stacks_.size());
  for (size_t i = 0; i < stacks_.size(); ++i) {
    std::vector<PyValue> names, frames;
    for (const auto& n : stacks_[i].names) names.push_back(PyValue::Str(n));
    for (const auto& f : stacks_[i].frames) frames.push_back(PyValue::Str(f));
    groups.emplace_back(std::to_string(i),
                        PyValue::List({PyValue::List(std::move(names)),
                                       PyValue::List(std::move(frames))}));
  }
  return ToPyJson(PyValue::Dict(std::move(groups)), kIndent);
}

std::string DumpWriter::ConstructJsonText() const {
  return ToPyJson(PyValue::Dict(construct_), kIndent);
}

Status DumpWriter::Flush() {
  if (options_.make_dir_lazily)
    LOCKSTEP_RETURN_IF_ERROR(MakeDirs(options_.root, dir_));
  if (pack_ != nullptr) {  // dump.json names only tensors a reader can read
    // Kept on failure, for RemoveTensors to remove.
    LOCKSTEP_RETURN_IF_ERROR(pack_->Finish());
    pack_.reset();
  }
  LOCKSTEP_RETURN_IF_ERROR(
      WriteFileAtomic(dir_ + "/dump.json", DumpJsonText()));
  if (options_.write_stack_json && stack_dirty_) {
    LOCKSTEP_RETURN_IF_ERROR(
        WriteFileAtomic(dir_ + "/stack.json", StackJsonText()));
    stack_dirty_ = false;
  }
  if (options_.write_construct_json && construct_dirty_) {
    LOCKSTEP_RETURN_IF_ERROR(
        WriteFileAtomic(dir_ + "/construct.json", ConstructJsonText()));
    construct_dirty_ = false;
  }
  return Status::Ok();
}

}  // namespace lockstep
