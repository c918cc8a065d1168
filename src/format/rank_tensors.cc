#include "lockstep/format/rank_tensors.h"

#include <sys/stat.h>

#include "format/str_cat.h"
#include "lockstep/format/tensor_file.h"

namespace lockstep {
namespace {

bool PathLExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

std::string RankDirOrDot(const std::string& rank_dir) {
  return rank_dir.empty() ? std::string(".") : rank_dir;
}

}  // namespace

bool RankUsesPack(const std::string& rank_dir) {
  std::string dir = RankDirOrDot(rank_dir);
  return !PathLExists(dir + "/dump_tensor_data") &&
         PathLExists(StrCat(dir, "/", kPackFileName));
}

RankTensors RankTensors::Open(const std::string& rank_dir) {
  RankTensors r;
  r.dir_ = rank_dir;
  r.packed_ = RankUsesPack(rank_dir);
  if (!r.packed_) return r;
  StatusOr<std::shared_ptr<const PackReader>> p =
      PackReader::Open(StrCat(RankDirOrDot(rank_dir), "/", kPackFileName));
  if (p.ok()) {
    r.pack_ = std::move(*p);
  } else {
    r.pack_status_ = p.status();
  }
  return r;
}

StatusOr<Tensor> RankTensors::Read(const std::string& data_name,
                                   const TensorFileLoader& load,
                                   std::string* where) const {
  if (!packed_) {
    StatusOr<std::string> path = ResolveTensorPath(dir_, data_name);
    *where = path.ok() ? *path : data_name;
    if (!path.ok()) return path.status();
    return load ? load(*path) : ReadTensorFile(*path);
  }
  if (pack_ == nullptr) {
    *where = StrCat(RankDirOrDot(dir_), "/", kPackFileName);
    return pack_status_;
  }
  *where = StrCat(pack_->path(), ": entry '", data_name, "'");
  return pack_->Read(data_name);
}

}  // namespace lockstep
