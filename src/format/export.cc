#include "lockstep/format/export.h"

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <unordered_map>

#include "format/str_cat.h"
#include "lockstep/core/env.h"
#include "lockstep/core/file.h"
#include "lockstep/format/crc32.h"
#include "lockstep/format/discovery.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/dump_writer.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/pt_writer.h"
#include "lockstep/format/rank_tensors.h"
#include "lockstep/format/tensor_pack.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// Copies the regular file `from` to the new file `to` (never through a
// link at either name).
Status ExportCopyFile(const std::string& from, const std::string& to) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> f,
                            MappedFile::Open(from, /*populate=*/true,
                                             /*regular_only=*/true));
  LOCKSTEP_RETURN_IF_ERROR(WriteFileDirect(to, f->view()));
  return f->CheckIntact();
}

// data_name -> the name of the file exported for it, where they differ.
using Renames = std::unordered_map<std::string, std::string>;

// "x.npy" -> "x.pt".
std::string PtNameFor(const std::string& npy_name) {
  std::string_view stem = npy_name;
  if (stem.size() > 4 && stem.substr(stem.size() - 4) == ".npy")
    stem.remove_suffix(4);
  return StrCat(stem, ".pt");
}

// Writes the .npy bytes of pack entry `e` as the file msprobe's layout
// holds: those bytes, or the tensor they hold as torch.save writes it.
Status ExportEntry(const PackEntry& e, std::string_view bytes,
                   const std::string& subject, const std::string& data_dir,
                   TensorFileFormat format, Renames* renames,
                   ExportSummary* s) {
  if (format == TensorFileFormat::kNpy) {
    LOCKSTEP_RETURN_IF_ERROR(
        WriteFileDirect(StrCat(data_dir, "/", e.name), bytes));
    s->bytes += static_cast<int64_t>(bytes.size());
    return Status::Ok();
  }
  LOCKSTEP_ASSIGN_OR_RETURN(Tensor t, ReadNpyFromBuffer(bytes, subject));
  std::string name = PtNameFor(e.name);
  StatusOr<std::string> pt = EncodePt(t, PtArchiveName(name));
  if (!pt.ok()) return pt.status().WithContext(subject);
  LOCKSTEP_RETURN_IF_ERROR(WriteFileDirect(StrCat(data_dir, "/", name), *pt));
  s->bytes += static_cast<int64_t>(pt->size());
  (*renames)[e.name] = std::move(name);
  return Status::Ok();
}

// Writes every entry of the pack as its own file in `data_dir`, after
// checking both of its CRC-32s.
Status ExportPack(const PackReader& pack, const std::string& data_dir,
                  TensorFileFormat format, Renames* renames, ExportSummary* s) {
  for (const PackEntry& e : pack.entries()) {
    std::string_view bytes = pack.bytes().substr(e.offset, e.size);
    std::string subject = StrCat(pack.path(), ": entry '", e.name, "'");
    if (Crc32(bytes.substr(0, e.head)) != e.head_crc ||
        Crc32(bytes.substr(e.head)) != e.data_crc) {
      return Status::Corruption(
          subject, "its bytes do not match the CRC-32 the index records");
    }
    LOCKSTEP_RETURN_IF_ERROR(
        ExportEntry(e, bytes, subject, data_dir, format, renames, s));
    ++s->tensors;
  }
  return Status::Ok();
}

// `v` with every "data_name" string that `renames` holds renamed.
PyValue RenameDataNames(PyValue v, const Renames& renames) {
  if (v.kind() == PyValue::Kind::kList) {
    std::vector<PyValue> items = v.TakeItems();
    for (PyValue& item : items)
      item = RenameDataNames(std::move(item), renames);
    return PyValue::List(std::move(items));
  }
  if (v.kind() != PyValue::Kind::kDict) return v;
  std::vector<std::pair<std::string, PyValue>> fields = v.TakeFields();
  for (auto& [key, value] : fields) {
    auto it = key == "data_name" && value.kind() == PyValue::Kind::kStr
                  ? renames.find(value.as_str())
                  : renames.end();
    value = it != renames.end() ? PyValue::Str(it->second)
                                : RenameDataNames(std::move(value), renames);
  }
  return PyValue::Dict(std::move(fields));
}

// dump.json with its data_names renamed to the files exported for them
// (written as json.dump(..., indent=1) writes it, as the probe wrote it).
Status ExportRenamedDumpJson(const std::string& from, const std::string& to,
                             const Renames& renames) {
  LOCKSTEP_ASSIGN_OR_RETURN(DumpFile d, ReadDumpJson(from));
  for (DumpEntry& e : d.entries)
    e.value = RenameDataNames(std::move(e.value), renames);
  return WriteFileDirect(to, EncodeDumpJson(d));
}

// Copies the regular files of `dir`/dump_tensor_data into `data_dir` (made
// below `root`); anything else there, or a dump_tensor_data that is a
// symbolic link, is left out with a warning.
Status ExportFiles(const std::string& dir, const std::string& root,
                   const std::string& data_dir, ExportSummary* s) {
  struct stat info;
  std::string from = dir + "/dump_tensor_data";
  if (::lstat(from.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    s->warnings.push_back(from +
                          ": not a directory (a symbolic link?); "
                          "its tensors are not exported");
    return Status::Ok();
  }
  LOCKSTEP_RETURN_IF_ERROR(CreateDirsUnder(root, data_dir));
  std::error_code ec;
  for (fs::directory_iterator it(from, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code st;
    if (!it->is_regular_file(st) || it->is_symlink(st)) {
      s->warnings.push_back(
          StrCat(it->path().string(), ": not a regular file; not exported"));
      continue;
    }
    std::string name = it->path().filename().string();
    LOCKSTEP_RETURN_IF_ERROR(
        ExportCopyFile(it->path().string(), StrCat(data_dir, "/", name)));
    ++s->tensors;
    s->bytes += static_cast<int64_t>(it->file_size(st));
  }
  if (ec) return Status::IoError(from, ec.message());
  return Status::Ok();
}

Status ExportRank(const RankLayout& rank, const std::string& root,
                  const std::string& to, const ExportOptions& options,
                  ExportSummary* s) {
  LOCKSTEP_RETURN_IF_ERROR(CreateDirsUnder(root, to));
  if (rank.has_stack_json)
    LOCKSTEP_RETURN_IF_ERROR(
        ExportCopyFile(rank.dir + "/stack.json", to + "/stack.json"));
  if (rank.has_construct_json)
    LOCKSTEP_RETURN_IF_ERROR(
        ExportCopyFile(rank.dir + "/construct.json", to + "/construct.json"));
  ++s->ranks;
  std::string data_dir = to + "/dump_tensor_data";
  std::string dump_json = to + "/dump.json";
  struct stat info;  // a dump_tensor_data that is a link: ExportFiles warns
  if (::lstat((rank.dir + "/dump_tensor_data").c_str(), &info) == 0) {
    LOCKSTEP_RETURN_IF_ERROR(ExportCopyFile(rank.dump_json, dump_json));
    return ExportFiles(rank.dir, root, data_dir, s);
  }
  RankTensors tensors = RankTensors::Open(rank.dir);
  if (!tensors.packed()) return ExportCopyFile(rank.dump_json, dump_json);
  LOCKSTEP_RETURN_IF_ERROR(tensors.pack_status());
  ++s->packed_ranks;
  LOCKSTEP_RETURN_IF_ERROR(CreateDirsUnder(root, data_dir));
  Renames renames;
  LOCKSTEP_RETURN_IF_ERROR(ExportPack(*tensors.pack(), data_dir,
                                      options.tensor_format, &renames, s));
  if (renames.empty()) return ExportCopyFile(rank.dump_json, dump_json);
  return ExportRenamedDumpJson(rank.dump_json, dump_json, renames);
}

// Where rank dir `dir` goes: its path below the layout's root, under `to`.
std::string ExportDestination(const std::string& root, const std::string& dir,
                              const std::string& to) {
  if (dir.size() > root.size() && dir.compare(0, root.size(), root) == 0) {
    std::string rel = dir.substr(root.size());
    while (!rel.empty() && rel[0] == '/') rel.erase(0, 1);
    if (!rel.empty()) return to + "/" + rel;
  }
  return to;
}

Status CheckExportOut(const std::string& out) {
  struct stat st;
  if (::lstat(out.c_str(), &st) != 0) return Status::Ok();
  std::error_code ec;
  if (S_ISDIR(st.st_mode) && fs::is_empty(out, ec) && !ec) return Status::Ok();
  return Status::InvalidArgument(
      out,
      "exists; export never overwrites. Note: name a new directory, or "
      "remove this one");
}

Status ExportInto(const DumpLayout& layout, const std::string& tmp,
                  const ExportOptions& options, ExportSummary* s) {
  for (const StepLayout& step : layout.steps) {
    for (const RankLayout& rank : step.ranks) {
      LOCKSTEP_RETURN_IF_ERROR(
          ExportRank(rank, tmp, ExportDestination(layout.root, rank.dir, tmp),
                     options, s));
    }
  }
  std::string env = layout.root + "/env.json";
  struct stat st;
  if (layout.steps.size() > 0 && layout.steps[0].step >= 0 &&
      layout.steps[0].dir != layout.root && ::lstat(env.c_str(), &st) == 0 &&
      S_ISREG(st.st_mode)) {
    LOCKSTEP_RETURN_IF_ERROR(ExportCopyFile(env, tmp + "/env.json"));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ExportSummary> ExportDump(const std::string& dump,
                                   const std::string& out_arg,
                                   const ExportOptions& options) {
  std::string out = out_arg;  // "out/" names the same directory as "out"
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  LOCKSTEP_RETURN_IF_ERROR(CheckExportOut(out));
  LOCKSTEP_ASSIGN_OR_RETURN(DumpLayout layout, DiscoverDump(dump));
  ExportSummary s;
  s.warnings = layout.warnings;
  std::string parent = fs::path(out).parent_path().string();
  if (!parent.empty()) LOCKSTEP_RETURN_IF_ERROR(CreateDirs(parent));
  LOCKSTEP_ASSIGN_OR_RETURN(std::string tmp, MakePrivateTempDir(out));
  Status st = ExportInto(layout, tmp, options, &s);
  if (st.ok() && ::chmod(tmp.c_str(), 0755) != 0)
    st = Status::IoError(tmp, "cannot set the directory's mode");
  if (st.ok()) st = CheckExportOut(out);  // nothing appeared there meanwhile
  if (st.ok() && Env::Current()->Rename(tmp, out) != 0)
    st = Status::IoError(out, "cannot rename the export into place");
  if (!st.ok()) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    return st;
  }
  return s;
}

}  // namespace lockstep
