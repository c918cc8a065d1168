#include "torch/tensor_summary.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "lockstep/format/json_writer.h"
#include "lockstep/format/zip.h"
#include "lockstep/numerics/tensor_stats.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/device_stats.h"

namespace lockstep {
namespace {

// msprobe's statistics of a tensor, in dump.json's order.
constexpr const char* kStatKeys[] = {"Max", "Min", "Mean", "Norm"};

// The dtype name of a tensor lockstep has no DType for (TorchDTypeName
// names the others).
std::string OtherDTypeName(const at::Tensor& t) {
  switch (t.scalar_type()) {  // the names Python's str(dtype) gives
    case at::kComplexHalf:
      return "torch.complex32";
    case at::kComplexFloat:
      return "torch.complex64";
    case at::kComplexDouble:
      return "torch.complex128";
    case at::kQInt8:
      return "torch.qint8";
    case at::kQUInt8:
      return "torch.quint8";
    case at::kQInt32:
      return "torch.qint32";
    case at::kQUInt4x2:
      return "torch.quint4x2";
    case at::kQUInt2x4:
      return "torch.quint2x4";
    default:
      return std::string("torch.") + c10::toString(t.scalar_type());
  }
}

// `t`'s elements in contiguous CPU memory: `t` itself when it is a
// contiguous CPU tensor (the common case: no new TensorImpl), else a copy.
at::Tensor HostView(const at::Tensor& t) {
  if (t.device().is_cpu() && t.is_contiguous()) return t;
  at::Tensor host = t.detach();
  if (!host.device().is_cpu()) host = host.to(at::kCPU);
  return host.contiguous();
}

// Max, Min, Mean, Norm of finite-or-not float statistics as torch's
// reductions give them: NaN wins, then infinities.
TensorSummarizer::StatValues FloatStats(const TensorStats& s) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  TensorSummarizer::StatValues v;
  for (auto& k : v.kind) k = TensorSummarizer::StatValues::Kind::kFloat;
  if (s.nan > 0) {
    for (double& f : v.f) f = nan;
    return v;
  }
  double mean = Mean(s), norm = L2Norm(s);
  if (s.pos_inf > 0 || s.neg_inf > 0) {
    mean = (s.pos_inf > 0 && s.neg_inf > 0) ? nan : s.pos_inf > 0 ? inf : -inf;
    norm = inf;
  }
  v.f[0] = s.pos_inf > 0 ? inf : s.max;
  v.f[1] = s.neg_inf > 0 ? -inf : s.min;
  v.f[2] = mean;
  v.f[3] = norm;
  return v;
}

// Shortest contiguous run worth a kernel call of its own: below it, the
// strided tensor is copied to contiguous memory instead.
constexpr int64_t kMinRun = 256;

// The moments of a CPU tensor read where it lies, without a copy, into *s;
// false (nothing read) when its layout does not allow that cheaply. Max and
// Min do not depend on the order of the elements, and Mean and Norm, summed
// in double, only in their last bits, so the elements are read in memory
// order:
// - a tensor that fills its memory span without gaps or overlap
//   (contiguous, or a transpose or permutation of a contiguous one; PyTorch
//   has no negative strides, so data_ptr() is the span's start) in one run;
// - one whose innermost dimensions are contiguous over at least kMinRun
//   elements (a slice or split of a wider tensor: q, k, v of a fused
//   projection) run by run.
bool StridedMoments(DType d, const at::Tensor& t, TensorStats* s) {
  const int64_t n = t.numel();
  if (t.is_non_overlapping_and_dense()) {
    *s = ComputeTensorMoments(d, t.data_ptr(), static_cast<size_t>(n));
    return true;
  }
  at::IntArrayRef sizes = t.sizes(), strides = t.strides();
  int64_t dims = t.dim();
  // Dimensions [inner, dims) form one contiguous run of `run` elements.
  int64_t run = 1, inner = dims;
  while (inner > 0 && (sizes[inner - 1] == 1 || strides[inner - 1] == run)) {
    run *= sizes[inner - 1];
    --inner;
  }
  if (run < kMinRun) return false;
  const size_t item = t.element_size();
  const char* base = static_cast<const char*>(t.data_ptr());
  std::vector<int64_t> index(static_cast<size_t>(inner), 0);
  int64_t offset = 0;  // of the current run, in elements
  *s = TensorStats();
  for (int64_t done = 0; done < n; done += run) {
    MergeTensorStats(
        ComputeTensorMoments(d, base + offset * item, static_cast<size_t>(run)),
        s);
    // The next run: an odometer over the outer dimensions.
    for (int64_t k = inner - 1; k >= 0; --k) {
      if (++index[k] < sizes[k]) {
        offset += strides[k];
        break;
      }
      offset -= strides[k] * (sizes[k] - 1);
      index[k] = 0;
    }
  }
  return true;
}

// The statistics of `t`, read where it lies when it is a CPU tensor
// (StridedMoments), else from a contiguous CPU copy.
TensorSummarizer::StatValues TensorStatValues(const at::Tensor& t) {
  using Kind = TensorSummarizer::StatValues::Kind;
  TensorSummarizer::StatValues v;
  std::optional<DType> d = FromScalarType(t.scalar_type());
  if (!d || t.numel() == 0) return v;
  if (*d == DType::kBool) {
    v.kind[0] = v.kind[1] = Kind::kBool;
    v.i[0] = t.any().item<bool>();
    v.i[1] = t.all().item<bool>();
    return v;
  }
  TensorStats s;
  if (!t.device().is_cpu() || !StridedMoments(*d, t, &s)) {
    at::Tensor host = HostView(t);
    s = ComputeTensorMoments(*d, host.data_ptr(),
                             static_cast<size_t>(host.numel()));
  }
  if (IsFloatingPoint(*d)) return FloatStats(s);
  v.kind[0] = v.kind[1] = Kind::kInt;
  v.i[0] = static_cast<int64_t>(s.max);
  v.i[1] = static_cast<int64_t>(s.min);
  return v;
}

void WriteShape(const at::Tensor& t, PyJsonBuilder* b) {
  b->BeginList();
  for (int64_t d : t.sizes()) b->Int(d);
  b->EndList();
}

// A deferred statistic's placeholder: kDeferredMark, its index in the
// fetched values, kDeferredEnd. Raw bytes below 0x20 never occur in JSON
// text (strings escape them), so Resolve finds exactly these.
constexpr char kDeferredMark = '\x01';
constexpr char kDeferredEnd = '\x02';
// A deferred CRC-32's placeholder: kDeferredCrcMark, its index in the
// fetched CRCs, kDeferredEnd; replaced by the quoted hex string.
constexpr char kDeferredCrcMark = '\x03';

// The tensor whose version counter t shares: its base if t is a view.
const c10::TensorImpl* BaseOf(const at::Tensor& t) {
  return t.is_view() ? t._base().unsafeGetTensorImpl()
                     : t.unsafeGetTensorImpl();
}

// Why the probe cannot summarize `t`, or "" when it can.
std::string UnreadableReason(const at::Tensor& t) {
  if (t.is_nested()) return "nested tensor: not summarized";
  if (t.is_sparse() || t.is_sparse_csr()) {
    return c10::str("sparse tensor (layout ", t.layout(), "): not summarized");
  }
  if (t.is_quantized()) {
    return c10::str("quantized tensor (", t.scalar_type(), "): not summarized");
  }
  if (t.is_mkldnn()) return "mkldnn tensor: not summarized";
  if (t.is_meta()) return "meta tensor: has no data";
  if (!t.has_storage()) {
    return c10::str("tensor without storage (", t.key_set(),
                    "): not summarized");
  }
  if (!FromScalarType(t.scalar_type())) {
    return c10::str("dtype ", t.scalar_type(), ": not summarized");
  }
  return "";
}

}  // namespace

bool TensorSummarizer::StatValues::NonFinite() const {
  for (int k = 0; k < 4; ++k) {
    if (kind[k] == Kind::kFloat && !std::isfinite(f[k])) return true;
  }
  return false;
}

void TensorSummarizer::StatValues::WriteTo(PyJsonBuilder* b) const {
  for (int k = 0; k < 4; ++k) {
    b->Key(kStatKeys[k]);
    switch (kind[k]) {
      case Kind::kNull:
        b->Null();
        break;
      case Kind::kFloat:
        // Formatted on the writer thread (DumpWriter::DumpJsonText).
        b->LateFloat(f[k]);
        break;
      case Kind::kInt:
        b->Int(i[k]);
        break;
      case Kind::kBool:
        b->Bool(i[k] != 0);
        break;
    }
  }
}

void TensorSummarizer::Stats(const at::Tensor& t, PyJsonBuilder* b,
                             bool* overflow) {
  bool device_style = mode_.device_style || !t.device().is_cpu();
  const CachedStats* cached = FindCached(t);
  if (device_style && t.is_floating_point() && t.numel() > 0 && !overflow) {
    // An operator's output that the next one takes as input is reduced
    // once: its placeholders name the same deferred slot.
    if (cached != nullptr && cached->slot >= 0) {
      return WriteDeferredMarks(static_cast<size_t>(cached->slot), b);
    }
    if (cached != nullptr) return cached->stats.WriteTo(b);
    size_t slot = DeferStats(t);
    Remember(t, StatValues(), static_cast<int64_t>(slot));
    return WriteDeferredMarks(slot, b);
  }
  // A deferred entry has no values until Resolve.
  const StatValues* hit =
      cached != nullptr && cached->slot < 0 ? &cached->stats : nullptr;
  StatValues fresh;
  if (hit == nullptr) {
    fresh = TensorStatValues(t);
    Remember(t, fresh);
    hit = &fresh;
  }
  if (overflow != nullptr && hit->NonFinite()) *overflow = true;
  hit->WriteTo(b);
}

bool TensorSummarizer::ElementSet::operator==(const ElementSet& o) const {
  if (!valid || !o.valid || dims != o.dims || offset != o.offset) return false;
  for (int k = 0; k < dims; ++k) {
    if (size[k] != o.size[k] || stride[k] != o.stride[k]) return false;
  }
  return true;
}

TensorSummarizer::ElementSet TensorSummarizer::ElementsOf(const at::Tensor& t) {
  ElementSet s;
  if (!t.has_storage() || t.numel() == 0) return s;
  std::pair<int64_t, int64_t> d[ElementSet::kMaxDims];  // (stride, size)
  int n = 0;
  for (int64_t k = 0; k < t.dim(); ++k) {
    int64_t size = t.size(k);
    if (size == 1) continue;
    if (n == ElementSet::kMaxDims || t.stride(k) <= 0) return s;
    d[n++] = {t.stride(k), size};
  }
  for (int k = 1; k < n; ++k) {  // insertion sort: at most kMaxDims
    for (int j = k; j > 0 && d[j] < d[j - 1]; --j) std::swap(d[j], d[j - 1]);
  }
  for (int k = 0; k < n; ++k) {
    if (s.dims > 0) {
      int64_t extent = s.stride[s.dims - 1] * s.size[s.dims - 1];
      if (d[k].first < extent) return s;  // may overlap
      if (d[k].first == extent) {         // continues the last dimension
        s.size[s.dims - 1] *= d[k].second;
        continue;
      }
    }
    s.stride[s.dims] = d[k].first;
    s.size[s.dims] = d[k].second;
    ++s.dims;
  }
  s.offset = t.storage_offset();
  s.valid = true;
  return s;
}

const TensorSummarizer::CachedStats* TensorSummarizer::FindCached(
    const at::Tensor& t) const {
  const CachedStats* c = const_cast<TensorSummarizer*>(this)->FindEntry(t);
  if (c != nullptr) return c;
  // A view that holds exactly the elements of a cached tensor (view,
  // reshape, transpose, permute, t, flatten, squeeze, contiguous of a
  // contiguous tensor, a view of a slice, ...): the same set of elements of
  // the same storage (ElementsOf), unchanged since. Views of one base share
  // its version counter, so the version says so; other aliases of the
  // memory do not (`p.data` has a counter of its own: an optimizer writing
  // through one `p.data` leaves the version of the next at 0), so they must
  // be of the same base. Its Max and Min are the same, and its Mean and
  // Norm differ by the order of summation only (in double: the last bits).
  // Not for the CRC-32, which depends on the order.
  if (t.is_inference() || !t.has_storage()) return nullptr;
  const c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  const uint32_t version = static_cast<uint32_t>(t._version());
  const c10::TensorImpl* base = nullptr;
  std::optional<ElementSet> elements;  // t's, once a candidate needs them
  for (const CachedStats& e : cache_) {
    if (!e.tensor.defined() || e.storage != storage || e.version != version ||
        e.tensor.scalar_type() != t.scalar_type()) {
      continue;
    }
    if (base == nullptr) base = BaseOf(t);
    if (e.base != base) continue;
    if (!elements) {
      elements = ElementsOf(t);
      if (!elements->valid) return nullptr;
    }
    if (!e.elements_known) {
      e.elements = ElementsOf(e.tensor);
      e.elements_known = true;
    }
    if (e.elements == *elements) return &e;
  }
  return nullptr;
}

TensorSummarizer::CachedStats* TensorSummarizer::FindEntry(
    const at::Tensor& t) {
  // Inference tensors have no version counter.
  if (t.is_inference() || !t.has_storage()) return nullptr;
  for (CachedStats& c : cache_) {
    if (c.tensor.unsafeGetTensorImpl() == t.unsafeGetTensorImpl() &&
        c.version == t._version() && c.tensor.sizes() == t.sizes() &&
        c.tensor.data_ptr() == t.data_ptr()) {
      return &c;
    }
  }
  return nullptr;
}

uint32_t TensorSummarizer::TensorCrc(const at::Tensor& t) {
  // Stats() ran first: a CPU tensor is in the cache now, and an operator's
  // output that the next one takes as input is summed once.
  CachedStats* c = FindEntry(t);
  if (c != nullptr && c->has_crc) return c->crc;
  at::Tensor host = HostView(t);
  uint32_t crc = Crc32(std::string_view(
      static_cast<const char*>(host.data_ptr()), host.nbytes()));
  if (c != nullptr) {
    c->has_crc = true;
    c->crc = crc;
  }
  return crc;
}

void TensorSummarizer::Remember(const at::Tensor& t, const StatValues& stats,
                                int64_t slot) {
  if (t.is_inference() || !t.has_storage()) return;
  // t's elements are as they are now. A cached alias of its memory with a
  // version counter of its own (w, after a write through w.data) may be
  // stale without its version saying so: it is forgotten.
  const c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  const c10::TensorImpl* base = BaseOf(t);
  for (CachedStats& e : cache_) {
    if (e.tensor.defined() && e.storage == storage && e.base != base) {
      e.tensor.reset();
    }
  }
  CachedStats c;
  c.tensor = t;
  c.storage = storage;
  c.base = base;
  c.version = static_cast<uint32_t>(t._version());
  c.stats = stats;
  c.slot = slot;
  if (cache_.size() < kCacheSize) {
    cache_.push_back(std::move(c));
  } else {
    cache_[cache_next_] = std::move(c);
    cache_next_ = (cache_next_ + 1) % kCacheSize;
  }
}

size_t TensorSummarizer::DeferStats(const at::Tensor& t) {
  // Three reductions, one kernel each on a GPU (the probe's cost there is
  // the number of operators it launches per tensor): min and max together,
  // and the sum and the norm accumulated in double whatever the dtype.
  at::Tensor x = t.detach();
  Deferred d;
  d.n = x.numel();
  if (DeferOnDevice(x, &d)) {
    deferred_.push_back(std::move(d));
    return deferred_.size() - 1;
  }
  try {
    std::tie(d.min, d.max) = at::aminmax(x);
  } catch (const c10::Error&) {  // no kernel for this dtype (CPU fp16, 1.13)
    d.min = x.min();
    d.max = x.max();
  }
  d.sum = at::sum(x, at::kDouble);
  d.norm = at::linalg_vector_norm(x, 2, c10::nullopt, false, at::kDouble);
  deferred_.push_back(std::move(d));
  return deferred_.size() - 1;
}

TensorSummarizer::TensorSummarizer(SummaryMode mode, BackgroundWriter* files)
    : mode_(mode), files_(files), device_kernels_(DeviceKernelsWanted()) {}

int TensorSummarizer::ChunkFor(std::vector<DeviceChunk>* chunks,
                               const at::Tensor& t, int64_t values_per_slot,
                               at::ScalarType dtype) {
  int chunk = static_cast<int>(chunks->size()) - 1;
  while (chunk >= 0 && ((*chunks)[chunk].values.device() != t.device() ||
                        (*chunks)[chunk].used == kChunkSlots)) {
    --chunk;
  }
  if (chunk >= 0) return chunk;
  // NaN (statistics) where a launch failed, never stale memory.
  chunks->push_back(DeviceChunk{
      at::full(
          {values_per_slot * kChunkSlots},
          dtype == at::kDouble ? std::numeric_limits<double>::quiet_NaN() : 0.0,
          t.options().dtype(dtype)),
      0});
  return static_cast<int>(chunks->size()) - 1;
}

bool TensorSummarizer::DeferOnDevice(const at::Tensor& t, Deferred* d) {
  if (!device_kernels_ || !DeviceStatsSupported(t)) return false;
  try {
    const int chunk = ChunkFor(&device_chunks_, t, 4, at::kDouble);
    DeviceChunk& c = device_chunks_[chunk];
    const int64_t index = c.used;
    if (t.numel() <= kSmallStatsElements && t.is_contiguous()) {
      if (!pending_stats_.empty() &&
          pending_stats_[0].tensor.device() != t.device()) {
        FlushPendingStats();
      }
      pending_stats_.push_back(PendingSmall{t, chunk, index});
      if (pending_stats_.size() == kSmallBatch) FlushPendingStats();
    } else {
      LaunchDeviceStats(t, c.values, index);
    }
    d->chunk = chunk;
    d->index = c.used++;
    return true;
  } catch (const c10::Error&) {  // the ATen reductions instead
    return false;
  }
}

namespace {

// Launches `pending` as one batch (small), else one at a time (single); a
// slot that still fails keeps its first value (NaN statistics, CRC 0) and
// the first failure goes to *error.
template <typename T, typename Pending, typename Chunks, typename Small,
          typename Single>
void FlushBatch(Pending* pending, const Chunks& chunks, int64_t per_slot,
                Small small, Single single, const char* what, Status* error) {
  if (pending->empty()) return;
  std::vector<at::Tensor> tensors;
  std::vector<T*> outs;
  for (const auto& p : *pending) {
    tensors.push_back(p.tensor);
    outs.push_back(chunks[p.chunk].values.template data_ptr<T>() +
                   per_slot * p.index);
  }
  try {
    small(tensors.data(), outs.data(), static_cast<int>(tensors.size()));
  } catch (const c10::Error& e) {
    for (const auto& p : *pending) {
      try {
        single(p.tensor, chunks[p.chunk].values, p.index);
      } catch (const c10::Error&) {
        if (error->ok()) {
          *error = Status::Internal(what, e.what_without_backtrace());
        }
      }
    }
  }
  pending->clear();
}

}  // namespace

void TensorSummarizer::FlushPendingStats() {
  FlushBatch<double>(&pending_stats_, device_chunks_, 4, LaunchSmallDeviceStats,
                     LaunchDeviceStats, "device statistics", &error_);
}

void TensorSummarizer::FlushPendingCrcs() {
  FlushBatch<int32_t>(&pending_crcs_, crc_chunks_, 1, LaunchSmallDeviceCrcs,
                      LaunchDeviceCrc, "device CRC-32", &error_);
}

void TensorSummarizer::FetchDeviceChunks(std::vector<double>* values) const {
  std::vector<at::Tensor> host(device_chunks_.size());
  for (size_t c = 0; c < device_chunks_.size(); ++c) {
    const DeviceChunk& chunk = device_chunks_[c];
    // Kernels queued on other streams than this thread's current one are
    // finished too.
    DeviceStatsSynchronize(chunk.values.device());
    host[c] = chunk.values.narrow(0, 0, 4 * chunk.used).to(at::kCPU);
  }
  for (size_t i = 0; i < deferred_.size(); ++i) {
    const Deferred& d = deferred_[i];
    if (d.chunk < 0) continue;
    const double* v = host[d.chunk].data_ptr<double>() + 4 * d.index;
    double* to = values->data() + 4 * i;
    to[0] = v[0];                             // max
    to[1] = v[1];                             // min
    to[2] = v[2] / static_cast<double>(d.n);  // mean
    to[3] = std::sqrt(v[3]);                  // norm
  }
}

bool TensorSummarizer::DeferCrcOnDevice(const at::Tensor& t, PyJsonBuilder* b) {
  if (!device_kernels_ || !DeviceCrcSupported(t)) return false;
  CachedStats* cached = FindEntry(t);
  int64_t slot = cached != nullptr ? cached->crc_slot : -1;
  if (slot < 0) {
    try {
      const int chunk = ChunkFor(&crc_chunks_, t, 1, at::kInt);
      DeviceChunk& c = crc_chunks_[chunk];
      if (static_cast<int64_t>(t.nbytes()) <= kSmallCrcBytes &&
          t.is_contiguous()) {
        if (!pending_crcs_.empty() &&
            pending_crcs_[0].tensor.device() != t.device()) {
          FlushPendingCrcs();
        }
        pending_crcs_.push_back(PendingSmall{t, chunk, c.used});
        if (pending_crcs_.size() == kSmallBatch) FlushPendingCrcs();
      } else {
        LaunchDeviceCrc(t, c.values, c.used);
      }
      deferred_crc_.push_back(DeferredCrc{chunk, c.used++});
    } catch (const c10::Error&) {  // the host copy instead
      return false;
    }
    slot = static_cast<int64_t>(deferred_crc_.size()) - 1;
    if (cached != nullptr) cached->crc_slot = slot;
  }
  std::string mark(1, kDeferredCrcMark);
  mark += std::to_string(slot);
  mark += kDeferredEnd;
  b->Key("md5").Raw(mark);
  return true;
}

std::vector<uint32_t> TensorSummarizer::FetchDeferredCrcs() const {
  std::vector<at::Tensor> host(crc_chunks_.size());
  for (size_t c = 0; c < crc_chunks_.size(); ++c) {
    const DeviceChunk& chunk = crc_chunks_[c];
    DeviceStatsSynchronize(chunk.values.device());
    host[c] = chunk.values.narrow(0, 0, chunk.used).to(at::kCPU);
  }
  std::vector<uint32_t> out(deferred_crc_.size());
  for (size_t i = 0; i < deferred_crc_.size(); ++i) {
    const DeferredCrc& d = deferred_crc_[i];
    out[i] = static_cast<uint32_t>(host[d.chunk].data_ptr<int32_t>()[d.index]);
  }
  return out;
}

void TensorSummarizer::WriteDeferredMarks(size_t slot, PyJsonBuilder* b) {
  for (size_t k = 0; k < 4; ++k) {
    std::string mark(1, kDeferredMark);
    mark += std::to_string(slot * 4 + k);
    mark += kDeferredEnd;
    b->Key(kStatKeys[k]).Raw(mark);
  }
}

std::string TensorSummarizer::SaveFile(const at::Tensor& t,
                                       const std::string& stem) {
  if (dump_ == nullptr || files_ == nullptr || files_disabled_) return "";
  StatusOr<DumpWriter::TensorTarget> target = dump_->TensorTargetFor(stem);
  at::Tensor copy = t.detach()
                        .to(at::kCPU, /*non_blocking=*/false,
                            /*copy=*/true)
                        .contiguous();
  StatusOr<lockstep::Tensor> host =
      target.ok() ? ToHostTensor(copy)
                  : StatusOr<lockstep::Tensor>(target.status());
  if (!host.ok()) {
    if (error_.ok()) error_ = host.status();
    skips_.push_back(
        Skip{target.ok() ? target->data_name : stem, host.status().message()});
    return "";
  }
  if (target->pack != nullptr) {
    files_->EnqueueToPack(std::move(target->pack), target->data_name,
                          std::move(*host));
  } else {
    files_->Enqueue(std::move(target->path), std::move(*host));
  }
  return std::move(target->data_name);
}

void TensorSummarizer::Tensor(const at::Tensor& t, const std::string& stem,
                              PyJsonBuilder* b, bool* overflow) {
  DepthGuard depth(this);
  if (!t.defined()) {
    b->Null();
    return;
  }
  b->BeginDict();
  b->Key("type").Str("torch.Tensor");
  std::optional<DType> d = FromScalarType(t.scalar_type());
  if (d) {
    b->Key("dtype").Str(TorchDTypeName(*d));
  } else {
    b->Key("dtype").Str(OtherDTypeName(t));
  }
  if (std::string why = UnreadableReason(t); !why.empty()) {
    b->Key("shape");
    if (t.is_nested()) {
      b->Null();
    } else {
      WriteShape(t, b);
    }
    StatValues().WriteTo(b);
    b->Key("requires_grad").Bool(t.requires_grad());
    b->Key("skipped").Str(why);
    b->EndDict();
    skips_.push_back(Skip{stem, std::move(why)});
    return;
  }
  b->Key("shape");
  WriteShape(t, b);
  Stats(t, b, overflow);
  b->Key("requires_grad").Bool(t.requires_grad());
  if (mode_.save) {
    std::string name = SaveFile(t, stem);
    if (!name.empty()) b->Key("data_name").Str(name);
  }
  if (mode_.crc && d && !DeferCrcOnDevice(t, b)) {
    uint32_t crc = TensorCrc(t);
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", crc);
    b->Key("md5").Str(hex);
  }
  b->EndDict();
}

namespace {

// torch's name of a scalar type ("torch.bfloat16"), as str(torch.dtype) is.
std::string TorchDtypeText(int64_t code) {
  if (code < 0 || code >= static_cast<int64_t>(c10::ScalarType::NumOptions))
    return "ScalarType " + std::to_string(code);
  auto t = static_cast<c10::ScalarType>(code);
  if (std::optional<DType> d = FromScalarType(t))
    return std::string(TorchDTypeName(*d));
  switch (t) {
    case c10::ScalarType::ComplexHalf:
      return "torch.complex32";
    case c10::ScalarType::ComplexFloat:
      return "torch.complex64";
    case c10::ScalarType::ComplexDouble:
      return "torch.complex128";
    default:
      return std::string("torch.") + c10::toString(t);
  }
}

}  // namespace

void TensorSummarizer::ListAt(const c10::IValue* values, size_t n,
                              std::string* stem, PyJsonBuilder* b,
                              bool* overflow,
                              const std::vector<bool>* dtype_at) {
  DepthGuard depth(this);
  b->BeginList();
  size_t base = stem->size();
  for (size_t i = 0; i < n; ++i) {
    *stem += '.';
    *stem += std::to_string(i);
    if (dtype_at != nullptr && i < dtype_at->size() && (*dtype_at)[i] &&
        values[i].isInt()) {
      b->BeginDict().Key("type").Str("torch.dtype").Key("value");
      b->Str(TorchDtypeText(values[i].toInt())).EndDict();
    } else {
      Value(values[i], stem, b, overflow);
    }
    stem->resize(base);
  }
  b->EndList();
}

void TensorSummarizer::List(const std::vector<at::Tensor>& tensors,
                            std::string stem, PyJsonBuilder* b,
                            bool* overflow) {
  DepthGuard depth(this);
  b->BeginList();
  size_t base = stem.size();
  for (size_t i = 0; i < tensors.size(); ++i) {
    stem += '.';
    stem += std::to_string(i);
    Tensor(tensors[i], stem, b, overflow);
    stem.resize(base);
  }
  b->EndList();
}

namespace {

// {"type": type, "value": ...}: the caller writes the value and EndDict.
PyJsonBuilder& Typed(const char* type, PyJsonBuilder* b) {
  return b->BeginDict().Key("type").Str(type).Key("value");
}

// A Python number that ATen wrapped into a 0-dim tensor (`x.mul_(2.0)`): the
// number the user wrote, as msprobe records it.
void WrappedNumber(const at::Tensor& t, PyJsonBuilder* b) {
  // ATen wraps Python's numbers as CPU double, int64 and bool tensors: read
  // those directly (item() is an operator call of its own).
  const void* p = t.device().is_cpu() ? t.data_ptr() : nullptr;
  if (t.scalar_type() == at::kBool) {
    Typed("bool", b)
        .Bool(p ? *static_cast<const bool*>(p) : t.item<bool>())
        .EndDict();
  } else if (t.scalar_type() == at::kLong && p != nullptr) {
    Typed("int", b).Int(*static_cast<const int64_t*>(p)).EndDict();
  } else if (at::isIntegralType(t.scalar_type(), false)) {
    Typed("int", b).Int(t.item<int64_t>()).EndDict();
  } else if (at::isComplexType(t.scalar_type())) {
    b->BeginDict().Key("type").Str("complex").EndDict();
  } else if (t.scalar_type() == at::kDouble && p != nullptr) {
    Typed("float", b).Float(*static_cast<const double*>(p)).EndDict();
  } else {
    Typed("float", b).Float(t.item<double>()).EndDict();
  }
}

}  // namespace

void TensorSummarizer::Value(const c10::IValue& v, std::string* stem,
                             PyJsonBuilder* b, bool* overflow) {
  DepthGuard depth(this);
  if (v.isTensor() && v.toTensor().unsafeGetTensorImpl()->is_wrapped_number())
    return WrappedNumber(v.toTensor(), b);
  if (v.isTensor()) return Tensor(v.toTensor(), *stem, b, overflow);
  if (v.isNone()) {
    b->Null();
  } else if (v.isBool()) {
    Typed("bool", b).Bool(v.toBool()).EndDict();
  } else if (v.isInt()) {
    Typed("int", b).Int(v.toInt()).EndDict();
  } else if (v.isDouble()) {
    Typed("float", b).Float(v.toDouble()).EndDict();
  } else if (v.isString()) {
    Typed("str", b).Str(v.toStringRef()).EndDict();
  } else if (v.isDevice()) {
    Typed("torch.device", b).Str(v.toDevice().str()).EndDict();
  } else if (v.isTensorList()) {
    std::vector<c10::IValue> items;
    for (const at::Tensor& t : v.toTensorVector()) items.emplace_back(t);
    ListAt(items.data(), items.size(), stem, b, overflow);
  } else if (v.isList()) {
    std::vector<c10::IValue> items = v.toListRef().vec();
    ListAt(items.data(), items.size(), stem, b, overflow);
  } else if (v.isTuple()) {
    std::vector<c10::IValue> items = v.toTupleRef().elements().vec();
    ListAt(items.data(), items.size(), stem, b, overflow);
  } else {
    b->BeginDict().Key("type").Str(v.tagKind()).EndDict();
  }
}

void TensorSummarizer::Args(c10::ArrayRef<const c10::IValue> values,
                            const std::vector<bool>& dtype_at, std::string stem,
                            PyJsonBuilder* b) {
  ListAt(values.data(), values.size(), &stem, b, nullptr, &dtype_at);
}

std::vector<double> TensorSummarizer::FetchDeferred() const {
  // [max, min, mean, norm] of each deferred tensor. One stack and one copy
  // to the host per device and dtype (min/max) and per device (sums and
  // norms): a handful of transfers per step, however many tensors.
  std::vector<double> values(deferred_.size() * 4);
  // Members' tensors `a` and `b`, stacked, fetched as doubles, written at
  // values[4 * member + at] and the slot after it.
  auto fetch = [&](const std::vector<size_t>& members, at::Tensor Deferred::*a,
                   at::Tensor Deferred::*b, size_t at) {
    std::vector<at::Tensor> parts;
    parts.reserve(members.size() * 2);
    for (size_t i : members) {
      parts.push_back(deferred_[i].*a);
      parts.push_back(deferred_[i].*b);
    }
    at::Tensor host =
        at::stack(parts).to(at::kDouble).to(at::kCPU).contiguous();
    const double* v = host.data_ptr<double>();
    for (size_t j = 0; j < members.size(); ++j) {
      values[members[j] * 4 + at] = v[2 * j];
      values[members[j] * 4 + at + 1] = v[2 * j + 1];
    }
  };
  std::map<std::pair<std::string, int>, std::vector<size_t>> by_dtype;
  std::map<std::string, std::vector<size_t>> by_device;
  for (size_t i = 0; i < deferred_.size(); ++i) {
    if (deferred_[i].chunk >= 0) continue;  // the CUDA kernel's
    const at::Tensor& m = deferred_[i].min;
    std::string device = m.device().str();
    by_dtype[{device, static_cast<int>(m.scalar_type())}].push_back(i);
    by_device[device].push_back(i);
  }
  for (const auto& [key, members] : by_dtype) {
    fetch(members, &Deferred::max, &Deferred::min, 0);
  }
  for (const auto& [device, members] : by_device) {
    fetch(members, &Deferred::sum, &Deferred::norm, 2);
  }
  for (size_t i = 0; i < deferred_.size(); ++i) {
    if (deferred_[i].chunk >= 0) continue;
    values[i * 4 + 2] /= static_cast<double>(deferred_[i].n);  // the mean
  }
  FetchDeviceChunks(&values);
  return values;
}

void TensorSummarizer::Resolve(std::vector<std::string>* texts) {
  FlushPendingStats();
  FlushPendingCrcs();
  if (!has_deferred()) return;
  std::vector<double> values = FetchDeferred();
  std::vector<uint32_t> crcs = FetchDeferredCrcs();
  static constexpr char kMarks[] = {kDeferredMark, kDeferredCrcMark, '\0'};
  for (std::string& text : *texts) {
    size_t at = text.find_first_of(kMarks);
    if (at == std::string::npos) continue;
    std::string out;
    out.reserve(text.size() + 64);
    size_t from = 0;
    while (at != std::string::npos) {
      size_t end = text.find(kDeferredEnd, at);
      if (end == std::string::npos) break;
      out.append(text, from, at - from);
      size_t index = std::strtoull(text.c_str() + at + 1, nullptr, 10);
      if (text[at] == kDeferredCrcMark) {
        char hex[11] = "null";
        if (index < crcs.size()) {
          std::snprintf(hex, sizeof hex, "\"%08x\"", crcs[index]);
        }
        out += hex;
      } else if (index < values.size()) {
        AppendPyJsonFloat(values[index], &out);
      } else {
        out += "null";
      }
      from = end + 1;
      at = text.find_first_of(kMarks, from);
    }
    out.append(text, from, std::string::npos);
    text.swap(out);
  }
  deferred_.clear();
  device_chunks_.clear();
  deferred_crc_.clear();
  crc_chunks_.clear();
}

Status TensorSummarizer::TakeError() {
  Status st = error_;
  error_ = Status::Ok();
  return st;
}

}  // namespace lockstep
