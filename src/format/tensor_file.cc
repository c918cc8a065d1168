#include "lockstep/format/tensor_file.h"

#include "lockstep/format/npy.h"
#include "lockstep/format/pt_reader.h"

namespace lockstep {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  std::string x(suffix);
  return s.size() >= x.size() &&
         s.compare(s.size() - x.size(), x.size(), x) == 0;
}

}  // namespace

StatusOr<Tensor> ReadTensorFile(const std::string& path) {
  if (EndsWith(path, ".npy")) return ReadNpy(path);
  if (EndsWith(path, ".pt") || EndsWith(path, ".pth"))
    return ReadPtTensor(path);
  StatusOr<Tensor> npy = ReadNpy(path);
  if (npy.ok()) return npy;
  return ReadPtTensor(path);
}

}  // namespace lockstep
