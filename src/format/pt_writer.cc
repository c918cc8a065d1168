#include "lockstep/format/pt_writer.h"

#include <vector>

#include "format/str_cat.h"
#include "format/zip_writer.h"
#include "lockstep/core/file.h"
#include "lockstep/format/crc32.h"

namespace lockstep {
namespace {

constexpr size_t kMaxArchiveName = 32 << 10;

// Emits the pickle opcodes (protocol 2) that Python's pickle.Pickler writes
// for the objects torch.save pickles, memoizing what it memoizes (globals,
// strings, non-empty tuples, reduced objects) with BINPUT, in order.
class Pickler {
 public:
  explicit Pickler(std::string* out) : out_(out) { Op("\x80\x02"); }

  void Op(std::string_view opcodes) { out_->append(opcodes); }
  void Global(std::string_view module, std::string_view name) {
    *out_ += 'c';
    *out_ += StrCat(module, "\n", name, "\n");
    Memoize();
  }
  void Str(std::string_view s) {  // BINUNICODE
    *out_ += 'X';
    Le(s.size(), 4);
    out_->append(s);
    Memoize();
  }
  // BININT1 / BININT2 / BININT / LONG1, as pickle picks them for v >= 0.
  void Int(int64_t v) {
    if (v < 0x100) {
      *out_ += 'K';
      Le(v, 1);
    } else if (v < 0x10000) {
      *out_ += 'M';
      Le(v, 2);
    } else if (v < 0x80000000LL) {
      *out_ += 'J';
      Le(v, 4);
    } else {  // bit_length / 8 + 1 bytes: the top byte keeps the sign bit 0
      int n = 1;
      while (n < 8 && (v >> (8 * n)) != 0) ++n;
      if ((v >> (8 * n - 1)) & 1) ++n;
      *out_ += '\x8a';
      Le(n, 1);
      Le(v, n);
    }
  }
  void IntTuple(const std::vector<int64_t>& v) {
    if (v.empty()) return Op(")");  // EMPTY_TUPLE, not memoized
    if (v.size() > 3) Op("(");
    for (int64_t x : v) Int(x);
    static const char kTupleN[] = {'t', '\x85', '\x86', '\x87'};
    *out_ += v.size() > 3 ? kTupleN[0] : kTupleN[v.size()];
    Memoize();
  }
  void Memoize() {  // BINPUT (torch's pickles never reach 256 entries)
    *out_ += 'q';
    Le(memo_++, 1);
  }

 private:
  void Le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) *out_ += static_cast<char>(v >> (8 * i));
  }

  std::string* out_;
  uint64_t memo_ = 0;
};

// Strides of a C-contiguous tensor, as torch computes them: empty dims
// count as 1.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> stride(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    stride[i] = s;
    s *= shape[i] > 1 ? shape[i] : 1;
  }
  return stride;
}

// data.pkl: _rebuild_tensor_v2(storage, 0, size, stride, False, {}).
std::string EncodeDataPkl(const Tensor& t) {
  std::string out;
  Pickler p(&out);
  p.Global("torch._utils", "_rebuild_tensor_v2");
  p.Op("((");
  p.Str("storage");
  p.Global("torch", TorchStorageName(t.dtype()));
  p.Str("0");
  p.Str("cpu");
  p.Int(t.numel());
  p.Op("t");
  p.Memoize();
  p.Op("Q");  // BINPERSID
  p.Int(0);   // storage offset
  p.IntTuple(t.shape());
  p.IntTuple(ContiguousStrides(t.shape()));
  p.Op("\x89");  // NEWFALSE: requires_grad
  p.Global("collections", "OrderedDict");
  p.Op(")R");  // OrderedDict(): backward hooks
  p.Memoize();
  p.Op("t");
  p.Memoize();
  p.Op("R");
  p.Memoize();
  p.Op(".");
  return out;
}

}  // namespace

bool PtSupportsDType(DType dtype) {
  return dtype != DType::kUInt16 && dtype != DType::kUInt32 &&
         dtype != DType::kUInt64;
}

std::string PtArchiveName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  std::string_view base =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = base.find_last_of('.');
  if (dot != std::string_view::npos) base = base.substr(0, dot);
  return base.empty() ? std::string("archive") : std::string(base);
}

StatusOr<std::string> EncodePt(const Tensor& t, std::string_view archive_name,
                               const PtWriteOptions& options) {
  if (!PtSupportsDType(t.dtype())) {
    return Status::NotSupported(
        TorchDTypeName(t.dtype()),
        "torch.save files have no storage type that torch 1.13 loads for "
        "it. Note: save it as .npy (tensor_format \"npy\")");
  }
  if (archive_name.size() >= kMaxArchiveName) {
    return Status::InvalidArgument(
        StrCat("archive name '", archive_name.substr(0, 64), "...'"),
        "32 KiB or longer: ZIP names are at most 64 KiB");
  }
  std::string pkl = EncodeDataPkl(t);
  std::string_view data(reinterpret_cast<const char*>(t.data()), t.nbytes());
  std::string prefix(archive_name);
  std::string names[3] = {prefix + "/data.pkl", prefix + "/data/0",
                          prefix + "/version"};
  std::string out;
  size_t overhead = 0;
  for (const auto& n : names)
    overhead += internal::TorchZipWriter::MaxOverhead(n);
  out.reserve(pkl.size() + data.size() + 2 + overhead);
  internal::TorchZipWriter zip(&out, options.zip64_from_bytes);
  zip.AddRecord(names[0], pkl, Crc32(pkl));
  zip.AddRecord(names[1], data, Crc32(data));
  zip.AddRecord(names[2], "3\n", Crc32("3\n"));
  zip.Finish();
  return out;
}

Status WritePt(const std::string& path, const Tensor& t,
               const PtWriteOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::string bytes,
                            EncodePt(t, PtArchiveName(path), options));
  return options.atomic ? WriteFileAtomic(path, bytes)
                        : WriteFileDirect(path, bytes);
}

}  // namespace lockstep
