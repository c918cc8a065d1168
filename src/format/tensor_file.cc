#include "lockstep/format/tensor_file.h"

#include "lockstep/core/file.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/pt_reader.h"

namespace lockstep {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  std::string x(suffix);
  return s.size() >= x.size() &&
         s.compare(s.size() - x.size(), x.size(), x) == 0;
}

// Reads through a lazily mapped file; a zero-copy result records where its
// bytes lie in the file.
StatusOr<Tensor> ReadMapped(const std::string& path, bool npy) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                            MappedFile::Open(path, /*populate=*/false));
  std::string_view view = file->view();
  const std::byte* begin = file->data();
  const std::byte* end = begin + file->size();
  StatusOr<Tensor> t = npy ? ReadNpyFromBuffer(view, path, file)
                           : ReadPtTensorFromMemory(view, file, path);
  if (!t.ok() || t->nbytes() == 0 || t->data() < begin ||
      t->data() + t->nbytes() > end) {
    return t;
  }
  return t->WithFileRegion(path, static_cast<uint64_t>(t->data() - begin));
}

bool HasNpyMagic(const std::string& path) {
  StatusOr<std::shared_ptr<const MappedFile>> f = MappedFile::Open(path, false);
  return f.ok() && (*f)->view().substr(0, 6) == "\x93NUMPY";
}

}  // namespace

StatusOr<Tensor> ReadTensorFile(const std::string& path) {
  if (EndsWith(path, ".npy")) return ReadMapped(path, true);
  if (EndsWith(path, ".pt") || EndsWith(path, ".pth")) {
    return ReadMapped(path, false);
  }
  return ReadMapped(path, HasNpyMagic(path));
}

}  // namespace lockstep
