#include "torch/tensor_summary.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "lockstep/compare/tensor_stats.h"
#include "lockstep/format/zip.h"
#include "lockstep/torch/tensor_bridge.h"

namespace lockstep {
namespace {

constexpr char kDeferredMark = '\x01';
// msprobe's statistics of a tensor, in dump.json's order.
constexpr const char* kStatKeys[] = {"Max", "Min", "Mean", "Norm"};

PyValue Typed(const char* type, PyValue value) {
  return PyValue::Dict({{"type", PyValue::Str(type)}, {"value", value}});
}

PyValue ShapeValue(const at::Tensor& t) {
  std::vector<PyValue> dims;
  for (int64_t d : t.sizes()) dims.push_back(PyValue::Int(d));
  return PyValue::List(std::move(dims));
}

std::string DTypeString(const at::Tensor& t) {
  std::optional<DType> d = FromScalarType(t.scalar_type());
  if (d) return std::string(TorchDTypeName(*d));
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

// Max, Min, Mean, Norm of finite-or-not float statistics as torch's
// reductions give them: NaN wins, then infinities.
std::vector<PyValue> FloatStats(const TensorStats& s) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  if (s.nan > 0) return std::vector<PyValue>(4, PyValue::Float(nan));
  double mx = s.pos_inf > 0 ? inf : s.max;
  double mn = s.neg_inf > 0 ? -inf : s.min;
  double mean = Mean(s), norm = L2Norm(s);
  if (s.pos_inf > 0 || s.neg_inf > 0) {
    mean = (s.pos_inf > 0 && s.neg_inf > 0) ? nan : s.pos_inf > 0 ? inf : -inf;
    norm = inf;
  }
  return {PyValue::Float(mx), PyValue::Float(mn), PyValue::Float(mean),
          PyValue::Float(norm)};
}

std::vector<PyValue> HostStats(const at::Tensor& host, bool* overflow) {
  std::optional<DType> d = FromScalarType(host.scalar_type());
  if (!d || host.numel() == 0) return std::vector<PyValue>(4);
  if (*d == DType::kBool) {
    bool any = host.any().item<bool>(), all = host.all().item<bool>();
    return {PyValue::Bool(any), PyValue::Bool(all), PyValue(), PyValue()};
  }
  TensorStats s = ComputeTensorStats(*d, host.data_ptr(),
                                     static_cast<size_t>(host.numel()), 1);
  if (IsFloatingPoint(*d)) {
    if (overflow && (s.nan + s.pos_inf + s.neg_inf) > 0) *overflow = true;
    return FloatStats(s);
  }
  return {PyValue::Int(static_cast<int64_t>(s.max)),
          PyValue::Int(static_cast<int64_t>(s.min)), PyValue(), PyValue()};
}

// `t`'s elements in contiguous CPU memory: `t` itself when it is a
// contiguous CPU tensor (the common case: no new TensorImpl), else a copy.
at::Tensor HostView(const at::Tensor& t) {
  if (t.device().is_cpu() && t.is_contiguous()) return t;
  at::Tensor host = t.detach();
  if (!host.device().is_cpu()) host = host.to(at::kCPU);
  return host.contiguous();
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

PyValue TensorSummarizer::Stats(const at::Tensor& t, bool* overflow) {
  bool device_style = mode_.device_style || !t.device().is_cpu();
  if (device_style && t.is_floating_point() && t.numel() > 0 && !overflow) {
    return DeferStats(t);
  }
  if (const std::vector<PyValue>* hit = FindCached(t)) {
    if (overflow != nullptr) {  // the cached values say it
      for (const PyValue& v : *hit) {
        if (v.kind() == PyValue::Kind::kFloat &&
            !std::isfinite(v.as_double())) {
          *overflow = true;
        }
      }
    }
    return PyValue::List(*hit);
  }
  std::vector<PyValue> v = HostStats(HostView(t), overflow);
  Remember(t, v);
  return PyValue::List(std::move(v));
}

const std::vector<PyValue>* TensorSummarizer::FindCached(
    const at::Tensor& t) const {
  // Inference tensors have no version counter.
  if (t.is_inference() || !t.has_storage()) return nullptr;
  for (const CachedStats& c : cache_) {
    if (c.tensor.unsafeGetTensorImpl() == t.unsafeGetTensorImpl() &&
        c.version == t._version() && c.tensor.sizes() == t.sizes() &&
        c.tensor.data_ptr() == t.data_ptr()) {
      return &c.stats;
    }
  }
  return nullptr;
}

void TensorSummarizer::Remember(const at::Tensor& t,
                                const std::vector<PyValue>& stats) {
  if (t.is_inference() || !t.has_storage()) return;
  CachedStats c{t, static_cast<uint32_t>(t._version()), stats};
  if (cache_.size() < kCacheSize) {
    cache_.push_back(std::move(c));
  } else {
    cache_[cache_next_] = std::move(c);
    cache_next_ = (cache_next_ + 1) % kCacheSize;
  }
}

PyValue TensorSummarizer::DeferStats(const at::Tensor& t) {
  at::Tensor x = t.detach();
  at::Tensor wide = x.scalar_type() == at::kDouble ? x : x.to(at::kFloat);
  deferred_.push_back(
      at::stack({x.max().to(at::kDouble), x.min().to(at::kDouble),
                 wide.mean().to(at::kDouble), wide.norm().to(at::kDouble)}));
  std::string mark(1, kDeferredMark);
  std::vector<PyValue> v(4, PyValue::Str(mark));
  v[0] = PyValue::Str(mark + std::to_string(deferred_.size() - 1));
  return PyValue::List(std::move(v));
}

std::string TensorSummarizer::SaveFile(const at::Tensor& t,
                                       const std::string& stem) {
  if (dump_ == nullptr || files_ == nullptr) return "";
  StatusOr<std::string> path = dump_->TensorFilePath(stem);
  at::Tensor copy = t.detach()
                        .to(at::kCPU, /*non_blocking=*/false,
                            /*copy=*/true)
                        .contiguous();
  StatusOr<lockstep::Tensor> host =
      path.ok() ? ToHostTensor(copy)
                : StatusOr<lockstep::Tensor>(path.status());
  if (!host.ok()) {
    if (error_.ok()) error_ = host.status();
    skips_.push_back(Skip{stem + ".npy", host.status().message()});
    return "";
  }
  files_->Enqueue(*path, std::move(*host));
  return stem + ".npy";
}

PyValue TensorSummarizer::Tensor(const at::Tensor& t, const std::string& stem,
                                 bool* overflow) {
  if (!t.defined()) return PyValue();
  std::vector<std::pair<std::string, PyValue>> f;
  f.emplace_back("type", PyValue::Str("torch.Tensor"));
  f.emplace_back("dtype", PyValue::Str(DTypeString(t)));
  if (std::string why = UnreadableReason(t); !why.empty()) {
    f.emplace_back("shape", t.is_nested() ? PyValue() : ShapeValue(t));
    for (const char* key : kStatKeys) f.emplace_back(key, PyValue());
    f.emplace_back("requires_grad", PyValue::Bool(t.requires_grad()));
    f.emplace_back("skipped", PyValue::Str(why));
    skips_.push_back(Skip{stem, std::move(why)});
    return PyValue::Dict(std::move(f));
  }
  f.emplace_back("shape", ShapeValue(t));
  std::vector<PyValue> stats = Stats(t, overflow).TakeItems();
  for (int i = 0; i < 4; ++i) f.emplace_back(kStatKeys[i], std::move(stats[i]));
  f.emplace_back("requires_grad", PyValue::Bool(t.requires_grad()));
  if (mode_.save) {
    std::string name = SaveFile(t, stem);
    if (!name.empty()) f.emplace_back("data_name", PyValue::Str(name));
  }
  if (mode_.crc && FromScalarType(t.scalar_type())) {
    at::Tensor host = HostView(t);
    uint32_t crc = Crc32(std::string_view(
        static_cast<const char*>(host.data_ptr()), host.nbytes()));
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", crc);
    f.emplace_back("md5", PyValue::Str(hex));
  }
  return PyValue::Dict(std::move(f));
}

PyValue TensorSummarizer::List(const c10::IValue* values, size_t n,
                               const std::string& stem, bool* overflow) {
  std::vector<PyValue> items;
  items.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    items.push_back(Value(values[i], stem + "." + std::to_string(i), overflow));
  }
  return PyValue::List(std::move(items));
}

PyValue TensorSummarizer::Value(const c10::IValue& v, const std::string& stem,
                                bool* overflow) {
  if (v.isTensor()) return Tensor(v.toTensor(), stem, overflow);
  if (v.isNone()) return PyValue();
  if (v.isBool()) return Typed("bool", PyValue::Bool(v.toBool()));
  if (v.isInt()) return Typed("int", PyValue::Int(v.toInt()));
  if (v.isDouble()) return Typed("float", PyValue::Float(v.toDouble()));
  if (v.isString()) return Typed("str", PyValue::Str(v.toStringRef()));
  if (v.isDevice())
    return Typed("torch.device", PyValue::Str(v.toDevice().str()));
  if (v.isTensorList()) {
    std::vector<c10::IValue> items;
    for (const at::Tensor& t : v.toTensorVector()) items.emplace_back(t);
    return List(items, stem, overflow);
  }
  if (v.isList()) {
    std::vector<c10::IValue> items = v.toListRef().vec();
    return List(items, stem, overflow);
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items = v.toTupleRef().elements().vec();
    return List(items, stem, overflow);
  }
  return PyValue::Dict({{"type", PyValue::Str(v.tagKind())}});
}

namespace {

void FillDeferred(const double* values, int64_t count, PyValue* v) {
  if (v->kind() == PyValue::Kind::kList) {
    std::vector<PyValue> items = v->TakeItems();
    for (PyValue& item : items) FillDeferred(values, count, &item);
    *v = PyValue::List(std::move(items));
    return;
  }
  if (v->kind() != PyValue::Kind::kDict) return;
  auto fields = v->TakeFields();
  int64_t slot = -1;
  for (auto& [key, val] : fields) {
    if (key == "Max" && val.kind() == PyValue::Kind::kStr &&
        !val.as_str().empty() && val.as_str()[0] == kDeferredMark) {
      slot = std::stoll(val.as_str().substr(1));
    }
  }
  const char* keys[] = {"Max", "Min", "Mean", "Norm"};
  for (auto& [key, val] : fields) {
    bool stat = false;
    for (int i = 0; i < 4; ++i) {
      if (slot >= 0 && slot < count && key == keys[i]) {
        val = PyValue::Float(values[slot * 4 + i]);
        stat = true;
      }
    }
    if (!stat) FillDeferred(values, count, &val);
  }
  *v = PyValue::Dict(std::move(fields));
}

}  // namespace

void TensorSummarizer::Resolve(std::vector<PyValue>* entries) {
  if (deferred_.empty()) return;
  at::Tensor all = at::stack(deferred_).to(at::kCPU).contiguous();
  const double* values = all.data_ptr<double>();
  int64_t count = static_cast<int64_t>(deferred_.size());
  for (PyValue& e : *entries) FillDeferred(values, count, &e);
  deferred_.clear();
}

Status TensorSummarizer::TakeError() {
  Status st = error_;
  error_ = Status::Ok();
  return st;
}

}  // namespace lockstep
