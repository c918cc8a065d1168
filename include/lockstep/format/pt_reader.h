// Reading one tensor from a file that torch.save wrote, without LibTorch.
//
// Since torch 1.6, torch.save writes a ZIP archive (see zip.h) whose entries
// share a prefix, normally the file's stem when it was saved:
//   <prefix>/data.pkl     the pickled object (see pickle.h)
//   <prefix>/data/<key>   one raw storage per key, little-endian, 64-byte
//                         aligned, STORED
//   <prefix>/version      "3\n"
//   <prefix>/byteorder    "little" or "big" (torch >= 2.0; absent = little)
// msprobe saves `tensor.clone().contiguous().detach()`, whose data.pkl is
//   torch._utils._rebuild_tensor_v2(
//       persistent_id(('storage', torch.FloatStorage, '0', 'cpu', numel)),
//       storage_offset, size, stride, requires_grad, OrderedDict())
// A tensor is a view of its storage: element i[0..n) of the tensor is storage
// element storage_offset + sum(i[k] * stride[k]). nn.Parameter wraps that
// call in torch._utils._rebuild_parameter(tensor, requires_grad, hooks).
//
// Thread safety: the functions are reentrant; the Tensors they return are
// immutable.
#ifndef LOCKSTEP_FORMAT_PT_READER_H_
#define LOCKSTEP_FORMAT_PT_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/pickle.h"
#include "lockstep/format/read_budget.h"
#include "lockstep/format/tensor.h"
#include "lockstep/format/zip.h"
#include "lockstep/numerics/dtype.h"

namespace lockstep {

struct PtReadOptions {
  // Check the CRC-32 of the tensor's storage (format/crc32.h: about 14 GB/s
  // with PCLMULQDQ). data.pkl and byteorder are always checked.
  bool verify_crc = true;
  // Storage of at least this many bytes that the result views whole and
  // without a copy is not checked here: the result carries the recorded
  // value (Tensor::unverified_crc32) so that the one pass that reads the
  // bytes anyway (a streamed compare) checks them. Default: never defer.
  uint64_t defer_crc_from_bytes = UINT64_MAX;
  // Largest result, in bytes, of a view that reads storage elements more than
  // once (a stride of 0, as torch.expand makes), so that forged strides
  // cannot make the reader allocate without bound. Views that read each
  // element at most once are never larger than their storage and are not
  // limited.
  uint64_t max_expanded_bytes = uint64_t{64} << 20;
  // Largest DEFLATE entry that will be inflated (torch never deflates).
  uint64_t max_inflated_bytes = uint64_t{1} << 34;
  // The file's budget (read_budget.h), for all its tensors and values
  // together: inflated storages and copied views are charged to its
  // expanded bytes before they are made, as are a checkpoint's names and
  // string values (one string referenced a thousand times is a thousand
  // copies).
  ReadLimits limits;
};

// What data.pkl says about the tensor: its storage record and the view.
struct PtTensorSpec {
  DType dtype = DType::kFloat32;
  std::string storage_key;      // "0": the entry <prefix>/data/<key>
  std::string location;         // "cpu", "cuda:0": where it was saved from
  int64_t storage_numel = 0;    // elements in the storage
  int64_t storage_offset = 0;   // elements
  std::vector<int64_t> shape;   // elements per dimension
  std::vector<int64_t> stride;  // elements, one per dimension, all >= 0
  bool requires_grad = false;
  bool is_parameter = false;  // saved as torch.nn.Parameter
};

// Interprets an unpickled data.pkl as one dense tensor: a call of
// torch._utils._rebuild_tensor_v2, possibly wrapped in _rebuild_parameter,
// _rebuild_parameter_with_state or torch._tensor._rebuild_from_type_v2.
// `subject` names data.pkl in messages. Returns NotSupported for other
// objects (a dict such as a state_dict, a list, a quantized or sparse tensor,
// a storage type lockstep has no dtype for) and Corruption for a malformed
// call (wrong argument count or types, negative sizes, shape and stride of
// different lengths).
StatusOr<PtTensorSpec> ParsePtTensorSpec(const PickleObject& root,
                                         const std::string& subject);

// An open torch.save archive: its records and its data.pkl unpickled, from
// which any number of tensors can be made (a state_dict holds many, and
// several of them may view one storage: tied weights, slices).
// Thread safety: immutable after Open; ReadTensor may run on many threads.
class PtArchive {
 public:
  // Opens the archive in `bytes` and unpickles its data.pkl. `owner` as
  // ReadPtTensorFromMemory's (null: tensors copy their bytes); `name` stands
  // for the path in messages. Errors as ReadPtTensor's (the legacy format
  // is NotSupported, with how to re-save it).
  // REQUIRES: `bytes` stays valid while the archive lives.
  // `limits` sets the budget that everything read from the archive shares.
  static StatusOr<PtArchive> Open(std::string_view bytes,
                                  std::shared_ptr<const void> owner,
                                  const std::string& name,
                                  const ReadLimits& limits = {});

  // The unpickled object torch.save wrote.
  const PickleObject& root() const { return pickle_.root(); }
  // "x.pt: zip entry 'x/data.pkl'": data.pkl in messages.
  const std::string& subject() const { return subject_; }

  // The tensor `spec` describes (ParsePtTensorSpec of a part of root()), read
  // from its storage record as ReadPtTensor reads it: zero-copy when it can
  // be, the storage's CRC-32 checked. `subject` names it in messages. An
  // inflated storage or a copied view is charged to budget() first
  // (NotSupported when it does not fit); options.limits is not used here.
  StatusOr<Tensor> ReadTensor(const PtTensorSpec& spec,
                              const std::string& subject,
                              const PtReadOptions& options) const;

  // What reading this archive has made so far, against its limits.
  ReadBudget& budget() const { return *budget_; }

 private:
  PtArchive(ZipReader zip) : zip_(std::move(zip)) {}

  ZipReader zip_;
  std::string prefix_;
  std::string subject_;
  Unpickled pickle_;
  bool big_endian_ = false;
  std::shared_ptr<const void> owner_;
  std::shared_ptr<ReadBudget> budget_;
};

// Reads the single tensor that torch.save wrote to `path`. When the tensor is
// C-contiguous, little-endian and aligned, the result points straight into a
// memory map of the file (no copy) and keeps the map alive; otherwise it owns
// a C-ordered little-endian copy (gathered along the strides, byte-swapped
// for byteorder "big"). The result's numel() may be 0; shape [] is a 0-d
// tensor of one element.
// Errors name the file and the entry: NotFound when the file, data.pkl or
// the storage entry is missing; Corruption when any part is malformed or
// sizes disagree ("x.pt: zip entry 'x/data/0': 12 bytes, but the storage of
// 4 float32 needs 16"); NotSupported for the legacy (torch < 1.6) format,
// non-tensor contents and unknown storage types.
StatusOr<Tensor> ReadPtTensor(const std::string& path,
                              const PtReadOptions& options = {});

// As ReadPtTensor, for a file's bytes already in memory; `name` stands for
// the path in messages. The result never refers to `bytes`: it owns a copy
// of the tensor's data.
StatusOr<Tensor> ReadPtTensorFromBuffer(std::string_view bytes,
                                        const std::string& name,
                                        const PtReadOptions& options = {});

// As ReadPtTensor, for bytes owned by `owner` (for instance a MappedFile):
// where no copy is needed, the result points into `bytes` and holds a
// reference to `owner`. A null `owner` means "copy", as
// ReadPtTensorFromBuffer does.
// REQUIRES: `owner` keeps `bytes` valid and unchanged for as long as it
// lives.
StatusOr<Tensor> ReadPtTensorFromMemory(std::string_view bytes,
                                        std::shared_ptr<const void> owner,
                                        const std::string& name,
                                        const PtReadOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_PT_READER_H_
