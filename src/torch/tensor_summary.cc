// TensorSummarizer (tensor_summary.h): the dict of each value (type, dtype,
// shape, requires_grad, data_name, md5), its tensor file, and lists and
// operator arguments. The statistics and their cache are in
// tensor_summary_stats.cc; the statistics and CRC-32s deferred to the
// device, and Resolve, in tensor_summary_deferred.cc.
#include "torch/tensor_summary.h"

#include <ATen/ATen.h>

#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/torch/tensor_bridge.h"
#include "torch/device_stats.h"

namespace lockstep {
namespace {

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

void WriteShape(const at::Tensor& t, PyJsonBuilder* b) {
  b->BeginList();
  for (int64_t d : t.sizes()) b->Int(d);
  b->EndList();
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

TensorSummarizer::TensorSummarizer(SummaryMode mode, BackgroundWriter* files)
    : mode_(mode), files_(files), device_kernels_(DeviceKernelsWanted()) {}

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

Status TensorSummarizer::TakeError() {
  Status st = error_;
  error_ = Status::Ok();
  return st;
}

}  // namespace lockstep
