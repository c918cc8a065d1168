// The dump.json description of one value seen by the probe: a tensor's
// msprobe dict (type, dtype, shape, Max, Min, Mean, Norm, requires_grad,
// data_name, md5) or a scalar/list, with the tensor's bytes optionally
// queued for a .npy file.
//
// Statistics (docs/msprobe_reference.md §2.3): float tensors get all four, in
// double over the finite elements, except that a NaN makes all four NaN and
// +-inf make Max/Min (and Mean, Norm) infinite as torch's reductions do;
// integer tensors get Max/Min and null Mean/Norm (msprobe HEAD); bool
// tensors Max = any, Min = all; empty tensors null. CPU tensors use
// lockstep's one-pass kernel; other devices reduce with ATen on the device
// and are fetched once, in Resolve (no host sync per tensor).
//
// Tensors it cannot read (sparse, quantized, nested, mkldnn, meta, without
// storage, complex or other dtypes lockstep has no type for) get their type,
// dtype, shape where known, null statistics and a "skipped" reason, and are
// listed in skips().
// Thread safety: not synchronized; the probe serializes calls.
#ifndef LOCKSTEP_SRC_TORCH_TENSOR_SUMMARY_H_
#define LOCKSTEP_SRC_TORCH_TENSOR_SUMMARY_H_

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/background_writer.h"
#include "lockstep/format/dump_writer.h"
#include "lockstep/format/py_json_builder.h"

namespace lockstep {

struct SummaryMode {
  bool save = false;          // queue tensors as .npy files
  bool crc = false;           // add "md5": CRC-32 of the bytes
  bool device_style = false;  // reduce on the device, fetch in Resolve
};

// Each call writes one value as the next value of a PyJsonBuilder (the
// probe builds dump.json's entries as text, without PyValue trees).
class TensorSummarizer {
 public:
  TensorSummarizer(SummaryMode mode, BackgroundWriter* files);

  void set_dump_writer(DumpWriter* w) { dump_ = w; }
  void set_save(bool save) { mode_.save = save; }
  // No tensor file from now on, whatever the mode says (the disk is full):
  // tensors get statistics only, without data_name.
  void disable_files() { files_disabled_ = true; }

  // The dict of `t`. `stem` names its file ("Functional.linear.0.forward.
  // input.0"). Sets *overflow when t has a NaN or an infinity (only known
  // at once for immediate statistics).
  void Tensor(const at::Tensor& t, const std::string& stem, PyJsonBuilder* b,
              bool* overflow = nullptr);
  // Any IValue: tensors as above, lists recursively (stem gets ".i"),
  // scalars as {"type": "int", "value": 2}, None as null. `stem` is
  // restored before returning.
  void Value(const c10::IValue& v, std::string* stem, PyJsonBuilder* b,
             bool* overflow = nullptr);
  // A list of values, item i named stem + "." + i.
  void List(const c10::IValue* values, size_t n, std::string stem,
            PyJsonBuilder* b, bool* overflow = nullptr) {
    ListAt(values, n, &stem, b, overflow);
  }
  void List(c10::ArrayRef<const c10::IValue> values, std::string stem,
            PyJsonBuilder* b, bool* overflow = nullptr) {
    ListAt(values.data(), values.size(), &stem, b, overflow);
  }
  void List(const std::vector<c10::IValue>& values, std::string stem,
            PyJsonBuilder* b, bool* overflow = nullptr) {
    ListAt(values.data(), values.size(), &stem, b, overflow);
  }
  void List(const std::vector<at::Tensor>& tensors, std::string stem,
            PyJsonBuilder* b, bool* overflow = nullptr);
  // An operator's arguments as List writes them, except that an int where
  // dtype_at[i] is set is a dtype (ATen passes a ScalarType as an int):
  // {"type": "torch.dtype", "value": "torch.bfloat16"}, as msprobe writes
  // the dtype its caller gave.
  void Args(c10::ArrayRef<const c10::IValue> values,
            const std::vector<bool>& dtype_at, std::string stem,
            PyJsonBuilder* b);

  // Replaces the placeholders of deferred statistics in `texts` (text
  // written by this summarizer's builders) with the fetched values: one
  // device-to-host copy for all of them.
  void Resolve(std::vector<std::string>* texts);
  bool has_deferred() const {
    return !deferred_.empty() || !deferred_crc_.empty();
  }
  // The first error from saving a tensor (bad name, dump dir).
  Status TakeError();
  // What was skipped since the last call: (stem, reason), in order.
  struct Skip {
    std::string what;
    std::string why;
  };
  std::vector<Skip> TakeSkips() { return std::move(skips_); }
  // Drops the remembered statistics (and the tensors they hold).
  void ClearCache() {
    cache_.clear();
    cache_next_ = 0;
  }

  // The elements of its storage a tensor covers: the first one's offset
  // and its dimensions by increasing stride, contiguous ones merged and
  // size-1 ones dropped. Tensors of one storage and dtype with equal sets
  // hold the same elements (in some order). `valid` is false for layouts
  // this does not describe: dimensions that may overlap (a stride below the
  // extent of the smaller ones: expanded, as_strided), more than kMaxDims,
  // no elements; an invalid set equals no set.
  struct ElementSet {
    static constexpr int kMaxDims = 8;
    bool valid = false;
    int dims = 0;
    int64_t offset = 0;
    int64_t size[kMaxDims] = {};
    int64_t stride[kMaxDims] = {};
    bool operator==(const ElementSet& o) const;
  };
  // (The cache matches views by it; public for tests.)
  static ElementSet ElementsOf(const at::Tensor& t);

  // Max, Min, Mean, Norm as dump.json has them: floats, ints (integer
  // tensors' Max/Min), bools (bool tensors) or null.
  struct StatValues {
    enum class Kind : uint8_t { kNull, kFloat, kInt, kBool };
    Kind kind[4] = {Kind::kNull, Kind::kNull, Kind::kNull, Kind::kNull};
    double f[4] = {};
    int64_t i[4] = {};
    bool NonFinite() const;
    // `"Max": ..., ..., "Norm": ...` as members of the open dict of b.
    void WriteTo(PyJsonBuilder* b) const;
  };

 private:
  // dtype_at: as for Args (top level only).
  void ListAt(const c10::IValue* values, size_t n, std::string* stem,
              PyJsonBuilder* b, bool* overflow,
              const std::vector<bool>* dtype_at = nullptr);
  void Stats(const at::Tensor& t, PyJsonBuilder* b, bool* overflow);
  // Queues t's reductions on its device; returns their slot in deferred_.
  size_t DeferStats(const at::Tensor& t);
  // The placeholders of slot's four statistics, as members of b's dict.
  void WriteDeferredMarks(size_t slot, PyJsonBuilder* b);
  // The deferred statistics, [max, min, mean, norm] per tensor, on the host.
  std::vector<double> FetchDeferred() const;
  std::string SaveFile(const at::Tensor& t, const std::string& stem);

  // The statistics of the last few tensors summarized: an operator's output
  // is usually the next one's input, and is then not reduced twice. Holding
  // the tensor keeps its TensorImpl from being reused by another tensor;
  // its version counter says whether it was written since, except through
  // an alias with a counter of its own (`.data`): Remember forgets the
  // entries such an alias's fresh statistics may have made stale (their
  // tensor undefined).
  struct CachedStats {
    at::Tensor tensor;
    // Of `tensor` (alive while it is held): its storage, the tensor whose
    // version counter it shares, and its elements once asked for.
    const c10::StorageImpl* storage = nullptr;
    const c10::TensorImpl* base = nullptr;
    mutable bool elements_known = false;
    mutable ElementSet elements;
    uint32_t version = 0;
    StatValues stats;
    bool has_crc = false;  // md5 mode: the CRC-32 of its bytes, once known
    uint32_t crc = 0;
    // Device-style: the slot in deferred_ of its statistics (`stats` are
    // unknown until Resolve); -1 for immediate statistics.
    int64_t slot = -1;
    // md5 mode on a CUDA device: the slot in deferred_crc_ of its CRC-32.
    int64_t crc_slot = -1;
  };
  // The entry of t, or of a cached tensor whose elements t views exactly.
  const CachedStats* FindCached(const at::Tensor& t) const;
  CachedStats* FindEntry(const at::Tensor& t);
  // md5 mode: the CRC-32 of t's bytes, from the cache when t was seen.
  uint32_t TensorCrc(const at::Tensor& t);
  void Remember(const at::Tensor& t, const StatValues& stats,
                int64_t slot = -1);
  static constexpr size_t kCacheSize = 8;
  std::vector<CachedStats> cache_;
  size_t cache_next_ = 0;

  SummaryMode mode_;
  BackgroundWriter* files_;
  DumpWriter* dump_ = nullptr;
  bool files_disabled_ = false;
  // A device tensor's reductions, fetched in Resolve: either ATen's (min
  // and max in its dtype, the sum and the L2 norm in double), or the CUDA
  // kernel's four doubles at index `index` of device_chunks_[chunk].
  struct Deferred {
    at::Tensor min, max, sum, norm;
    int64_t n = 0;
    int chunk = -1;
    int64_t index = 0;
  };
  std::vector<Deferred> deferred_;
  // Device buffers the CUDA kernel writes into: kChunkSlots statistics of
  // one device each, allocated as the step needs them, copied to the host
  // in Resolve (one copy per chunk) and dropped.
  struct DeviceChunk {
    at::Tensor values;  // 4 * kChunkSlots doubles
    int64_t used = 0;
  };
  static constexpr int64_t kChunkSlots = 4096;
  std::vector<DeviceChunk> device_chunks_;
  bool device_kernels_;  // DeviceKernelsWanted() when constructed
  // t's statistics by the CUDA kernel into a chunk slot; false where the
  // kernel does not handle t (or failed to launch).
  bool DeferOnDevice(const at::Tensor& t, Deferred* d);
  // The kernel's results into values ([max, min, mean, norm] per tensor).
  void FetchDeviceChunks(std::vector<double>* values) const;
  // md5 mode, a CUDA tensor: its CRC-32 queued on the device (or the slot of
  // the same tensor's), its placeholder written as b's "md5" member; false
  // where the kernel does not handle t.
  bool DeferCrcOnDevice(const at::Tensor& t, PyJsonBuilder* b);
  // The CRC-32 values of deferred_crc_, in order.
  std::vector<uint32_t> FetchDeferredCrcs() const;
  struct DeferredCrc {
    int chunk = 0;  // in crc_chunks_ (int32 values)
    int64_t index = 0;
  };
  std::vector<DeferredCrc> deferred_crc_;
  std::vector<DeviceChunk> crc_chunks_;
  // Small dense CUDA tensors queued for one launch of up to kSmallBatch
  // (device_stats.h), with their slots. They are launched when the
  // outermost Tensor/Value/List call returns (DepthGuard): before the
  // operator runs (its inputs) or the training code goes on (its outputs),
  // so the values read are the ones summarized.
  struct PendingSmall {
    at::Tensor tensor;
    int chunk = 0;
    int64_t index = 0;
  };
  std::vector<PendingSmall> pending_stats_;
  std::vector<PendingSmall> pending_crcs_;
  int depth_ = 0;
  void FlushPendingStats();
  void FlushPendingCrcs();
  struct DepthGuard {
    explicit DepthGuard(TensorSummarizer* s) : s(s) { ++s->depth_; }
    ~DepthGuard() {
      if (--s->depth_ == 0) {
        s->FlushPendingStats();
        s->FlushPendingCrcs();
      }
    }
    TensorSummarizer* s;
  };
  // The chunk of `chunks` on t's device with room for one more value (a new
  // one of `dtype` when none has).
  static int ChunkFor(std::vector<DeviceChunk>* chunks, const at::Tensor& t,
                      int64_t values_per_slot, at::ScalarType dtype);
  Status error_;
  std::vector<Skip> skips_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_TORCH_TENSOR_SUMMARY_H_
