// TensorSummarizer's statistics (tensor_summary.h): Max, Min, Mean and Norm
// of a tensor read where it lies, and the cache that reduces an operator's
// output once when the next one takes it (or a view of it) as input.
#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "lockstep/format/zip.h"
#include "lockstep/numerics/tensor_stats.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/tensor_summary.h"
#include "torch/tensor_summary_internal.h"

namespace lockstep {
namespace {

using summary_detail::kStatKeys;

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

// The tensor whose version counter t shares: its base if t is a view.
const c10::TensorImpl* BaseOf(const at::Tensor& t) {
  return t.is_view() ? t._base().unsafeGetTensorImpl()
                     : t.unsafeGetTensorImpl();
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

}  // namespace lockstep
