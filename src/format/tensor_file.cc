#include "lockstep/format/tensor_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "lockstep/core/file.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/pt_reader.h"
#include "lockstep/format/pt_writer.h"

namespace lockstep {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  std::string x(suffix);
  return s.size() >= x.size() &&
         s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// A .pt storage of this size or more, viewed whole, is CRC-checked by the
// pass that reads it (a streamed compare reads it once, chunk by chunk,
// through a map of its own): checking here would fault every page in first.
constexpr uint64_t kDeferCrcFromBytes = uint64_t{1} << 20;

// Reads through a lazily mapped file; a zero-copy result records where its
// bytes lie in the file.
StatusOr<Tensor> ReadMapped(const std::string& path, bool npy) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                            MappedFile::Open(path, /*populate=*/false,
                                             /*regular_only=*/true));
  std::string_view view = file->view();
  const std::byte* begin = file->data();
  const std::byte* end = begin + file->size();
  PtReadOptions options;
  options.defer_crc_from_bytes = kDeferCrcFromBytes;
  StatusOr<Tensor> t = npy ? ReadNpyFromBuffer(view, path, file)
                           : ReadPtTensorFromMemory(view, file, path, options);
  LOCKSTEP_RETURN_IF_ERROR(file->CheckIntact());
  if (!t.ok() || t->nbytes() == 0 || t->data() < begin ||
      t->data() + t->nbytes() > end) {
    return t;
  }
  return t->WithFileRegion(path, static_cast<uint64_t>(t->data() - begin));
}

bool IsPtPath(const std::string& path) {
  return EndsWith(path, ".pt") || EndsWith(path, ".pth");
}

bool HasNpyMagic(const std::string& path) {
  StatusOr<std::shared_ptr<const MappedFile>> f =
      MappedFile::Open(path, false, /*regular_only=*/true);
  return f.ok() && (*f)->view().substr(0, 6) == "\x93NUMPY";
}

}  // namespace

StatusOr<std::string> ResolveTensorPath(const std::string& dir,
                                        const std::string& data_name) {
  auto refuse = [&](const std::string& why) {
    return Status::InvalidArgument(data_name, "refused: " + why);
  };
  if (data_name.empty()) return refuse("empty data_name");
  if (data_name.find('\0') != std::string::npos) return refuse("NUL in name");
  if (data_name[0] == '/')
    return refuse("absolute path: leaves dump_tensor_data");
  std::string path =
      (dir.empty() ? std::string(".") : dir) + "/dump_tensor_data";
  size_t b = 0;
  for (;;) {  // dump_tensor_data itself, then each component below it
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      return Status::NotFound(
          path, std::string("cannot open: ") + std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) return refuse(path + " is a symbolic link");
    if (b > data_name.size()) {
      if (!S_ISREG(st.st_mode)) return refuse("not a regular file");
      return path;
    }
    if (!S_ISDIR(st.st_mode)) return refuse(path + " is not a directory");
    size_t e = data_name.find('/', b);
    if (e == std::string::npos) e = data_name.size();
    std::string part = data_name.substr(b, e - b);
    if (part == "..") return refuse("'..' leaves dump_tensor_data");
    if (part.empty() || part == ".") return refuse("empty or '.' component");
    path += "/" + part;
    b = e + 1;
  }
}

StatusOr<Tensor> ReadTensorFile(const std::string& path) {
  if (EndsWith(path, ".npy")) return ReadMapped(path, true);
  if (IsPtPath(path)) return ReadMapped(path, false);
  return ReadMapped(path, HasNpyMagic(path));
}

std::string_view TensorFileExtension(TensorFileFormat format) {
  return format == TensorFileFormat::kPt ? ".pt" : ".npy";
}

Status WriteTensorFile(const std::string& path, const Tensor& t,
                       const NpyWriteOptions& npy) {
  if (!IsPtPath(path)) return WriteNpy(path, t, npy);
  PtWriteOptions pt;
  pt.atomic = npy.atomic;
  return WritePt(path, t, pt);
}

}  // namespace lockstep
