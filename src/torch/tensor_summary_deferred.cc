// TensorSummarizer's deferred statistics (tensor_summary.h): a device
// tensor's reductions queued on its device (ATen's, or the CUDA kernels of
// device_stats.h, small tensors batched), their placeholders in the text,
// and Resolve, which fetches them all at once and writes them in.
#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lockstep/format/json_writer.h"
#include "torch/device_stats.h"
#include "torch/tensor_summary.h"
#include "torch/tensor_summary_internal.h"

namespace lockstep {
namespace {

using summary_detail::kStatKeys;

// A deferred statistic's placeholder: kDeferredMark, its index in the
// fetched values, kDeferredEnd. Raw bytes below 0x20 never occur in JSON
// text (strings escape them), so Resolve finds exactly these.
constexpr char kDeferredMark = '\x01';
constexpr char kDeferredEnd = '\x02';
// A deferred CRC-32's placeholder: kDeferredCrcMark, its index in the
// fetched CRCs, kDeferredEnd; replaced by the quoted hex string.
constexpr char kDeferredCrcMark = '\x03';

}  // namespace

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

}  // namespace lockstep
