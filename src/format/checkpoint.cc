// ReadCheckpoint: which format a path holds (by content), and shard
// directories.
#include "lockstep/format/checkpoint.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "lockstep/core/file.h"
#include "lockstep/format/json_reader.h"
#include "lockstep/format/safetensors.h"

namespace lockstep {
namespace checkpoint_internal {

namespace fs = std::filesystem;

constexpr uint64_t kMaxIndexBytes = uint64_t{64} << 20;

bool HasSuffix(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsShardName(const std::string& f) {
  return HasSuffix(f, ".safetensors") || HasSuffix(f, ".pt") ||
         HasSuffix(f, ".pth") || HasSuffix(f, ".bin") ||
         HasSuffix(f, ".index.json");
}

// The file names in `dir`, sorted; "" entries never.
std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    out.push_back(it->path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

CheckpointKind KindOfBytes(std::string_view b) {
  if (b.substr(0, 4) == "PK\x03\x04" || b.substr(0, 4) == "PK\x05\x06")
    return CheckpointKind::kTorchZip;
  // A header that starts at byte 8 is enough, so that a truncated file or
  // a wrong length gets the reader's precise error; but text that is JSON
  // from byte 0 (a dump.json) is safetensors only if its length fits.
  if (LooksLikeSafetensors(b) || (b.size() > 8 && b[8] == '{' && b[0] != '{'))
    return CheckpointKind::kSafetensors;
  // Legacy torch.save: a pickle (protocol 2: 0x80 0x02) whose first object
  // is torch's magic number, pickled as LONG1 (0x8a 0x0a).
  if (b.substr(0, 4) == std::string_view("\x80\x02\x8a\x0a", 4))
    return CheckpointKind::kTorchLegacy;
  if (b.size() >= 262 && b.substr(257, 5) == "ustar")
    return CheckpointKind::kTorchLegacy;
  return CheckpointKind::kNone;
}

StatusOr<Checkpoint> ReadFile(const std::string& path) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                            MappedFile::Open(path, /*populate=*/false,
                                             /*regular_only=*/true));
  std::string_view b = file->view();
  StatusOr<Checkpoint> c = Status::Internal(path, "unread");
  switch (KindOfBytes(b)) {
    case CheckpointKind::kSafetensors:
      c = ReadSafetensors(b, file, path);
      break;
    case CheckpointKind::kTorchZip:
    case CheckpointKind::kTorchLegacy:  // ReadTorchCheckpoint says why not
      c = ReadTorchCheckpoint(b, file, path);
      break;
    default:
      return Status::InvalidArgument(
          path,
          "not a checkpoint: neither a torch.save ZIP archive nor a "
          "safetensors file");
  }
  LOCKSTEP_RETURN_IF_ERROR(file->CheckIntact());
  if (c.ok()) c->path = path;
  return c;
}

// The shard files of `dir` that an index's weight_map names, with the names
// each must hold.
StatusOr<std::map<std::string, std::vector<std::string>>> ReadIndex(
    const std::string& index) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                            MappedFile::Open(index, true, true));
  if (file->size() > kMaxIndexBytes)
    return Status::NotSupported(index, "larger than 64 MiB");
  LOCKSTEP_ASSIGN_OR_RETURN(PyValue json, ParsePyJson(file->view(), index));
  const PyValue* map = json.Find("weight_map");
  if (map == nullptr || map->kind() != PyValue::Kind::kDict) {
    return Status::Corruption(index, "no \"weight_map\" dict");
  }
  std::map<std::string, std::vector<std::string>> files;
  for (const auto& [name, f] : map->fields()) {
    const std::string& s = f.as_str();
    if (f.kind() != PyValue::Kind::kStr || s.empty() ||
        s.find('/') != std::string::npos || s == "." || s == "..") {
      return Status::Corruption(index, "weight_map['" + name + "'] is " +
                                           f.PyRepr() +
                                           ", expected a file name");
    }
    files[s].push_back(name);
  }
  return files;
}

Status Merge(Checkpoint part, std::set<std::string>* seen, Checkpoint* out) {
  for (CheckpointEntry& e : part.entries) {
    if (!seen->insert(e.name).second) {
      return Status::Corruption(part.path,
                                "'" + e.name + "' is in another shard too");
    }
    out->entries.push_back(std::move(e));
  }
  if (out->format.empty()) out->format = part.format;
  if (out->format != part.format) out->format = "mixed";
  return Status::Ok();
}

StatusOr<Checkpoint> ReadShardDir(const std::string& dir) {
  std::vector<std::string> names = ListDir(dir);
  std::map<std::string, std::vector<std::string>> files;
  std::string index;
  for (const std::string& n : names) {
    if (HasSuffix(n, ".index.json")) index = dir + "/" + n;
  }
  if (!index.empty()) {
    LOCKSTEP_ASSIGN_OR_RETURN(files, ReadIndex(index));
  } else {
    bool st = std::any_of(names.begin(), names.end(), [](const auto& n) {
      return HasSuffix(n, ".safetensors");
    });
    for (const std::string& n : names) {
      if (st ? HasSuffix(n, ".safetensors") : IsShardName(n)) files[n];
    }
  }
  if (files.empty())
    return Status::NotFound(dir, "no checkpoint shards in the directory");
  Checkpoint out;
  out.path = dir;
  std::set<std::string> seen;
  for (auto& [file, expected] : files) {
    LOCKSTEP_ASSIGN_OR_RETURN(Checkpoint part, ReadFile(dir + "/" + file));
    std::set<std::string> held;
    for (const CheckpointEntry& e : part.entries) held.insert(e.name);
    for (const std::string& name : expected) {
      if (!held.count(name)) {
        return Status::Corruption(index, "'" + name + "' is not in " + file +
                                             ", where weight_map puts it");
      }
    }
    LOCKSTEP_RETURN_IF_ERROR(Merge(std::move(part), &seen, &out));
  }
  return out;
}

}  // namespace checkpoint_internal

CheckpointKind DetectCheckpoint(const std::string& path) {
  using namespace checkpoint_internal;
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (ec) return CheckpointKind::kNone;
  if (fs::is_directory(st)) {
    bool shards = false;
    for (const std::string& n : ListDir(path)) {
      if (n == "dump.json" || n.rfind("step", 0) == 0 ||
          n.rfind("rank", 0) == 0) {
        return CheckpointKind::kNone;
      }
      shards = shards || IsShardName(n);
    }
    return shards ? CheckpointKind::kShardDir : CheckpointKind::kNone;
  }
  if (!fs::is_regular_file(st)) return CheckpointKind::kNone;
  StatusOr<std::shared_ptr<const MappedFile>> f =
      MappedFile::Open(path, false, /*regular_only=*/true);
  if (!f.ok()) return CheckpointKind::kNone;
  return KindOfBytes((*f)->view());
}

StatusOr<Checkpoint> ReadCheckpoint(const std::string& path) {
  using namespace checkpoint_internal;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (DetectCheckpoint(path) != CheckpointKind::kShardDir) {
      return Status::InvalidArgument(
          path,
          "not a checkpoint directory (no *.safetensors, *.pt, *.bin "
          "or *.index.json files, or a dump's dump.json/step*/rank*)");
    }
    return ReadShardDir(path);
  }
  return ReadFile(path);
}

}  // namespace lockstep
