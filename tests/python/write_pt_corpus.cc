// write_pt_corpus OUT_DIR: writes .pt files with lockstep's pt writer for
// tests/python/pt_writer_test.py, which loads them with Debian's torch.
// For every dtype the writer supports and a set of shapes it writes
// <dtype>.<k>.pt (k indexes kShapes), with element bytes b[i] = (37 i + 11)
// mod 256 (bool: i % 3 == 0), and <dtype>.<k>.zip64.pt, the same tensor
// with ZIP64 records forced from 64 bytes on. Prints one line per file:
// name, torch dtype, shape (comma-separated). Exit 0, or 1 on a failure.
#include <cstdio>
#include <string>
#include <vector>

#include "lockstep/format/pt_writer.h"

namespace {

using lockstep::DType;

const std::vector<std::vector<int64_t>> kShapes = {
    {}, {0}, {1}, {7}, {3, 4}, {2, 0, 3}, {2, 3, 1, 5}, {300}, {70000}};

lockstep::Tensor Pattern(DType dtype, std::vector<int64_t> shape) {
  size_t n = static_cast<size_t>(lockstep::NumElements(shape)) *
             lockstep::DTypeSize(dtype);
  std::string bytes(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    bytes[i] = dtype == DType::kBool ? static_cast<char>(i % 3 == 0)
                                     : static_cast<char>(i * 37 + 11);
  }
  return lockstep::Tensor::FromBytes(dtype, std::move(shape), bytes);
}

std::string Join(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? "," : "") + std::to_string(shape[i]);
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_pt_corpus OUT_DIR\n");
    return 2;
  }
  const DType kTypes[] = {DType::kBool,    DType::kUInt8,    DType::kInt8,
                          DType::kInt16,   DType::kInt32,    DType::kInt64,
                          DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                          DType::kFloat64};
  for (DType d : kTypes) {
    std::string dt(lockstep::TorchDTypeName(d).substr(6));  // "float32"
    for (size_t k = 0; k < kShapes.size(); ++k) {
      lockstep::Tensor t = Pattern(d, kShapes[k]);
      for (bool zip64 : {false, true}) {
        std::string name =
            dt + "." + std::to_string(k) + (zip64 ? ".zip64.pt" : ".pt");
        lockstep::PtWriteOptions o;
        if (zip64) o.zip64_from_bytes = 64;
        lockstep::Status st = WritePt(std::string(argv[1]) + "/" + name, t, o);
        if (!st.ok()) {
          std::fprintf(stderr, "%s\n", st.ToString().c_str());
          return 1;
        }
        std::printf("%s\ttorch.%s\t%s\n", name.c_str(), dt.c_str(),
                    Join(kShapes[k]).c_str());
      }
    }
  }
  return 0;
}
