// Rebuilding a recorded call as an ATen operator call: which operator, which
// overload, and the recorded arguments converted to the schema's types.
// Which operators are tried (msprobe's Python API names mapped to ATen, and
// every overload of an ATen operator) is in replay_bind_apis.cc.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/ScalarType.h>

#include <map>

#include "lockstep/format/api_naming.h"
#include "torch/replay_bind_internal.h"
#include "torch/replay_internal.h"

namespace lockstep::replay {
namespace {

const std::string* TypeOf(const PyValue& v) {
  if (v.kind() != PyValue::Kind::kDict) return nullptr;
  const PyValue* t = v.Find("type");
  return t != nullptr && t->kind() == PyValue::Kind::kStr ? &t->as_str()
                                                          : nullptr;
}

// {"type": "int", "value": 3} -> the value node; null otherwise.
const PyValue* ScalarValue(const PyValue& v, std::string_view type) {
  const std::string* t = TypeOf(v);
  if (t == nullptr || *t != type) return nullptr;
  return v.Find("value");
}

std::optional<c10::ScalarType> DtypeByName(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  static const std::map<std::string_view, c10::ScalarType> kNames = {
      {"float32", at::kFloat},
      {"float", at::kFloat},
      {"float64", at::kDouble},
      {"double", at::kDouble},
      {"float16", at::kHalf},
      {"half", at::kHalf},
      {"bfloat16", at::kBFloat16},
      {"int64", at::kLong},
      {"long", at::kLong},
      {"int32", at::kInt},
      {"int", at::kInt},
      {"int16", at::kShort},
      {"int8", at::kChar},
      {"uint8", at::kByte},
      {"bool", at::kBool},
      {"complex64", at::kComplexFloat},
      {"complex128", at::kComplexDouble}};
  auto it = kNames.find(name);
  if (it == kNames.end()) return std::nullopt;
  return it->second;
}

// The arguments of one call while it is bound to one schema.
class Binder {
 public:
  Binder(const TensorLoader& load) : load_(load) {}

  // Converts recorded value `v` to schema type `t` (int[N] from a single
  // int when N is given). Errors say what did not fit.
  StatusOr<c10::IValue> Convert(const PyValue& v, const c10::TypePtr& t,
                                c10::optional<int32_t> n) {
    c10::TypeKind kind = t->kind();
    if (kind == c10::TypeKind::OptionalType) {
      if (v.is_none()) return c10::IValue();
      return Convert(v, t->containedType(0), n);
    }
    if (v.is_none()) return Mismatch("None", t);
    switch (kind) {
      case c10::TypeKind::TensorType:
        return ToTensor(v, t);
      case c10::TypeKind::IntType:
      case c10::TypeKind::SymIntType:
        if (const PyValue* x = ScalarValue(v, "int"))
          return c10::IValue(x->as_int());
        return Mismatch(v, t);
      case c10::TypeKind::FloatType:
        if (const PyValue* x = ScalarValue(v, "float"))
          return c10::IValue(x->as_double());
        if (const PyValue* x = ScalarValue(v, "int")) {
          return c10::IValue(static_cast<double>(x->as_int()));
        }
        return Mismatch(v, t);
      case c10::TypeKind::BoolType:
        if (const PyValue* x = ScalarValue(v, "bool"))
          return c10::IValue(x->as_bool());
        return Mismatch(v, t);
      case c10::TypeKind::NumberType:
        if (const PyValue* x = ScalarValue(v, "int"))
          return c10::IValue(x->as_int());
        if (const PyValue* x = ScalarValue(v, "float"))
          return c10::IValue(x->as_double());
        if (const PyValue* x = ScalarValue(v, "bool"))
          return c10::IValue(x->as_bool());
        return Mismatch(v, t);
      case c10::TypeKind::StringType:
        if (const PyValue* x = ScalarValue(v, "str"))
          return c10::IValue(x->as_str());
        return Mismatch(v, t);
      case c10::TypeKind::ScalarTypeType: {
        if (const PyValue* x = ScalarValue(v, "int"))
          return c10::IValue(x->as_int());
        const PyValue* x = ScalarValue(v, "torch.dtype");
        if (x != nullptr && x->kind() == PyValue::Kind::kStr) {
          if (auto d = DtypeByName(x->as_str())) {
            return c10::IValue(static_cast<int64_t>(*d));
          }
        }
        return Mismatch(v, t);
      }
      case c10::TypeKind::LayoutType:
        if (const PyValue* x = ScalarValue(v, "int"))
          return c10::IValue(x->as_int());
        if (ScalarValue(v, "torch.layout") != nullptr) {
          return c10::IValue(static_cast<int64_t>(at::kStrided));
        }
        return Mismatch(v, t);
      case c10::TypeKind::MemoryFormatType:
        if (const PyValue* x = ScalarValue(v, "int"))
          return c10::IValue(x->as_int());
        return Mismatch(v, t);
      case c10::TypeKind::DeviceObjType:
        // The replay runs on the CPU whatever the recorded device.
        if (ScalarValue(v, "torch.device") != nullptr ||
            ScalarValue(v, "str") != nullptr) {
          return c10::IValue(c10::Device(c10::kCPU));
        }
        return Mismatch(v, t);
      case c10::TypeKind::ListType:
        return ToList(v, t, n);
      default:
        return Status::NotSupported("argument type " + t->str() +
                                    " is not replayed");
    }
  }

  int wrapped_numbers() const { return wrapped_; }
  // Python varargs packed into an int[] (x.view(2, 3)).
  void NotePacked() { ++packed_; }
  int packed() const { return packed_; }

 private:
  Status Mismatch(std::string_view what, const c10::TypePtr& t) {
    return Status::InvalidArgument(std::string(what) + " for " + t->str());
  }
  Status Mismatch(const PyValue& v, const c10::TypePtr& t) {
    const std::string* type = TypeOf(v);
    std::string what = type != nullptr                    ? *type
                       : v.kind() == PyValue::Kind::kList ? "a list"
                                                          : "a value";
    return Mismatch(what, t);
  }

  StatusOr<c10::IValue> ToTensor(const PyValue& v, const c10::TypePtr& t) {
    if (IsRecordedTensor(v)) {
      StatusOr<at::Tensor> x = load_(v);
      if (!x.ok()) return x.status();
      return c10::IValue(*x);
    }
    // A Python number where ATen takes a tensor (x * 2.0): a wrapped number.
    at::Tensor w;
    if (const PyValue* x = ScalarValue(v, "int")) {
      w = at::scalar_to_tensor(at::Scalar(x->as_int()));
    } else if (const PyValue* x = ScalarValue(v, "float")) {
      w = at::scalar_to_tensor(at::Scalar(x->as_double()));
    } else if (const PyValue* x = ScalarValue(v, "bool")) {
      w = at::scalar_to_tensor(at::Scalar(x->as_bool()));
    } else {
      return Mismatch(v, t);
    }
    w.unsafeGetTensorImpl()->set_wrapped_number(true);
    ++wrapped_;
    return c10::IValue(w);
  }

  StatusOr<c10::IValue> ToList(const PyValue& v, const c10::TypePtr& t,
                               c10::optional<int32_t> n) {
    c10::TypePtr elem = t->containedType(0);
    const PyValue* list = &v;
    if (const PyValue* x = ScalarValue(v, "torch.Size")) list = x;
    if (list->kind() != PyValue::Kind::kList) {
      // int[2] stride=1 means [1, 1].
      if (n && (elem->kind() == c10::TypeKind::IntType ||
                elem->kind() == c10::TypeKind::SymIntType)) {
        if (const PyValue* x = ScalarValue(v, "int")) {
          return c10::IValue(std::vector<int64_t>(*n, x->as_int()));
        }
      }
      return Mismatch(v, t);
    }
    std::vector<c10::IValue> items;
    for (const PyValue& item : list->items()) {
      StatusOr<c10::IValue> c = Convert(item, elem, c10::nullopt);
      if (!c.ok()) return c.status();
      items.push_back(std::move(*c));
    }
    switch (elem->kind()) {
      case c10::TypeKind::IntType:
      case c10::TypeKind::SymIntType: {
        std::vector<int64_t> out;
        for (const c10::IValue& i : items) out.push_back(i.toInt());
        return c10::IValue(out);
      }
      case c10::TypeKind::FloatType: {
        std::vector<double> out;
        for (const c10::IValue& i : items) out.push_back(i.toDouble());
        return c10::IValue(out);
      }
      case c10::TypeKind::BoolType: {
        c10::List<bool> out;
        for (const c10::IValue& i : items) out.push_back(i.toBool());
        return c10::IValue(out);
      }
      case c10::TypeKind::TensorType: {
        c10::List<at::Tensor> out;
        for (const c10::IValue& i : items) out.push_back(i.toTensor());
        return c10::IValue(out);
      }
      case c10::TypeKind::OptionalType:
        if (elem->containedType(0)->kind() == c10::TypeKind::TensorType) {
          c10::List<c10::optional<at::Tensor>> out;
          for (const c10::IValue& i : items) {
            out.push_back(i.isNone() ? c10::optional<at::Tensor>()
                                     : c10::optional<at::Tensor>(i.toTensor()));
          }
          return c10::IValue(out);
        }
        [[fallthrough]];
      default:
        return Status::NotSupported("argument type " + t->str() +
                                    " is not replayed");
    }
  }

  const TensorLoader& load_;
  int wrapped_ = 0;
  int packed_ = 0;
};

// Python keyword arguments that have no ATen counterpart and change nothing
// in the result's values.
bool DroppableKwarg(std::string_view name) {
  return name == "inplace" || name == "_stacklevel" || name == "out" ||
         name == "size_average" || name == "reduce" || name == "non_blocking";
}

using Kwargs = std::vector<std::pair<std::string, const PyValue*>>;

// Binds positional `pos` and keyword `kw` to `schema`. Python's varargs
// (x.view(2, 3), x.permute(1, 0)) fill an int[] argument.
// `keyword_only_positional`: keyword-only arguments are taken from `pos` too
// (lockstep's probe records every argument in schema order).
StatusOr<std::vector<c10::IValue>> BindSchema(
    const c10::FunctionSchema& schema, const std::vector<const PyValue*>& pos,
    const Kwargs& kw,
    const std::vector<std::pair<std::string, c10::IValue>>& constants,
    bool keyword_only_positional, Binder* b) {
  const std::vector<c10::Argument>& params = schema.arguments();
  std::vector<c10::IValue> args(params.size());
  std::vector<bool> filled(params.size(), false);
  size_t p = 0;
  for (size_t i = 0; i < params.size() && p < pos.size(); ++i) {
    const c10::Argument& a = params[i];
    // lockstep's probe records every argument in schema order.
    if (a.kwarg_only() && !keyword_only_positional) break;
    const c10::TypePtr& t = a.real_type();
    bool int_list = t->kind() == c10::TypeKind::ListType &&
                    (t->containedType(0)->kind() == c10::TypeKind::IntType ||
                     t->containedType(0)->kind() == c10::TypeKind::SymIntType);
    if (int_list && ScalarValue(*pos[p], "int") != nullptr &&
        !(a.N() && pos.size() - p == 1)) {
      std::vector<int64_t> packed;
      while (p < pos.size()) {
        const PyValue* x = ScalarValue(*pos[p], "int");
        if (x == nullptr) break;
        packed.push_back(x->as_int());
        ++p;
      }
      args[i] = c10::IValue(packed);
      filled[i] = true;
      b->NotePacked();
      continue;
    }
    StatusOr<c10::IValue> c = b->Convert(*pos[p], t, a.N());
    if (!c.ok()) {
      // None for an argument with a default (max_pool2d's stride=None).
      if (pos[p]->is_none() && a.default_value()) {
        ++p;
        continue;
      }
      return Status::InvalidArgument("argument " + a.name() + ": " +
                                     c.status().message());
    }
    args[i] = std::move(*c);
    filled[i] = true;
    ++p;
  }
  if (p < pos.size()) {
    return Status::InvalidArgument(std::to_string(pos.size()) +
                                   " positional arguments, it takes fewer");
  }
  auto index_of = [&](std::string_view name) -> int {
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].name() == name) return static_cast<int>(i);
    }
    if (name == "input") return -2;
    return -1;
  };
  for (const auto& [name, v] : kw) {
    int i = index_of(name);
    if (i == -2) i = index_of("self");
    if (i < 0) {
      if (DroppableKwarg(name)) continue;
      if (v->is_none()) continue;  // an unset Python option
      return Status::InvalidArgument("keyword " + name + " has no counterpart");
    }
    if (filled[i]) {
      return Status::InvalidArgument("keyword " + name + " given twice");
    }
    StatusOr<c10::IValue> c =
        b->Convert(*v, params[i].real_type(), params[i].N());
    if (!c.ok()) {
      if (v->is_none() && params[i].default_value()) continue;
      return Status::InvalidArgument("argument " + name + ": " +
                                     c.status().message());
    }
    args[i] = std::move(*c);
    filled[i] = true;
  }
  for (const auto& [name, value] : constants) {
    int i = index_of(name);
    if (i >= 0 && !filled[i]) {
      args[i] = value;
      filled[i] = true;
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (filled[i]) continue;
    if (params[i].default_value()) {
      args[i] = *params[i].default_value();
    } else {
      return Status::InvalidArgument("argument " + params[i].name() +
                                     " is missing");
    }
  }
  return args;
}

// Python's reduction strings as ATen's enum (0 none, 1 mean, 2 sum).
const PyValue* ReductionAsInt(const PyValue* v, PyValue* storage) {
  const PyValue* s = ScalarValue(*v, "str");
  if (s == nullptr) return v;
  int64_t r = s->as_str() == "none" ? 0 : s->as_str() == "sum" ? 2 : 1;
  *storage = PyValue::Dict(
      {{"type", PyValue::Str("int")}, {"value", PyValue::Int(r)}});
  return storage;
}

}  // namespace

bool IsRecordedTensor(const PyValue& v) {
  const std::string* t = TypeOf(v);
  if (t == nullptr) return false;
  return v.Find("dtype") != nullptr && v.Find("shape") != nullptr &&
         (t->find("Tensor") != std::string::npos ||
          t->find("Parameter") != std::string::npos);
}

void FlattenRecorded(const PyValue& v, std::vector<const PyValue*>* out) {
  if (v.kind() == PyValue::Kind::kList) {
    for (const PyValue& item : v.items()) FlattenRecorded(item, out);
  } else {
    out->push_back(&v);
  }
}

StatusOr<BoundCall> BindCall(const std::string& entry_name,
                             const PyValue& entry, const TensorLoader& load) {
  std::vector<const PyValue*> pos;
  if (const PyValue* a = entry.Find("input_args");
      a != nullptr && a->kind() == PyValue::Kind::kList) {
    for (const PyValue& item : a->items()) pos.push_back(&item);
  }
  Kwargs kw;
  if (const PyValue* k = entry.Find("input_kwargs");
      k != nullptr && k->kind() == PyValue::Kind::kDict) {
    for (const auto& [name, v] : k->fields()) kw.emplace_back(name, &v);
  }
  // Candidate operators: exact (lockstep's "aten"), or by API name.
  std::vector<std::pair<std::string, std::string>> ops;  // name, overload
  std::vector<std::pair<std::string, c10::IValue>> constants;
  std::string api_desc;
  if (const PyValue* aten = entry.Find("aten");
      aten != nullptr && aten->kind() == PyValue::Kind::kStr) {
    const std::string& full = aten->as_str();
    size_t dot = full.find(
        '.', full.find("::") == std::string::npos ? 0 : full.find("::") + 2);
    ops.emplace_back(full.substr(0, dot),
                     dot == std::string::npos ? "" : full.substr(dot + 1));
    api_desc = full;
  } else {
    auto [prefix, api] = SplitApiName(entry_name);
    if (prefix == "Distributed") {
      return Status::NotSupported(
          "collective communication: its result depends on the other ranks");
    }
    if (prefix == "NPU" || prefix == "MindSpeed" || prefix == "Triton") {
      return Status::NotSupported(prefix +
                                  " operator: no CPU implementation in ATen");
    }
    if (prefix != "Functional" && prefix != "Torch" && prefix != "Tensor" &&
        prefix != "Aten" && prefix != "VF") {
      return Status::NotSupported("not an ATen operator call (" + prefix + ")");
    }
    auto it = PyApis().find(api);
    std::string name = "aten::" + api;
    if (it != PyApis().end()) {
      const PyApi& py = it->second;
      if (!py.not_replayable.empty())
        return Status::NotSupported(py.not_replayable);
      name = py.aten;
      constants = py.constants;
      if (py.swap && pos.size() >= 2) std::swap(pos[0], pos[1]);
      if (!py.params.empty()) {
        // Positional Python arguments become keywords by Python's names.
        Kwargs named;
        for (size_t i = 0; i < pos.size() && i < py.params.size(); ++i) {
          named.emplace_back(py.params[i], pos[i]);
        }
        if (pos.size() > py.params.size()) {
          return Status::NotSupported("more positional arguments than " + api +
                                      " takes");
        }
        for (auto& k : kw) named.push_back(k);
        kw = std::move(named);
        pos.clear();
      }
    }
    ops.emplace_back(name, "");
    if (it == PyApis().end()) {
      // lockstep's older dumps name aten::_softmax Functional.softmax, ...
      ops.emplace_back("aten::_" + api, "");
    }
    api_desc = name;
  }
  // Python reduction strings and padding_idx None as ATen takes them; the
  // Python-only options (pad mode, return_indices, max_norm, norm_type)
  // checked to change nothing, then left out.
  std::vector<PyValue> storage(kw.size());
  Kwargs kept;
  for (size_t i = 0; i < kw.size(); ++i) {
    auto [name, value] = kw[i];
    if (name == "reduction") {
      value = ReductionAsInt(value, &storage[i]);
    } else if (name == "padding_idx" && value->is_none()) {
      storage[i] = PyValue::Dict(
          {{"type", PyValue::Str("int")}, {"value", PyValue::Int(-1)}});
      value = &storage[i];
    } else if (name == "mode") {
      const PyValue* m = ScalarValue(*value, "str");
      if (m != nullptr && m->as_str() != "constant") {
        return Status::NotSupported("pad mode '" + m->as_str() +
                                    "' is not replayed");
      }
      continue;
    } else if (name == "return_indices" || name == "max_norm") {
      const PyValue* b = ScalarValue(*value, "bool");
      if (!value->is_none() && (b == nullptr || b->as_bool())) {
        return Status::NotSupported(name + " is not replayed");
      }
      continue;
    } else if (name == "norm_type") {
      continue;  // only used with max_norm
    }
    kept.emplace_back(std::move(name), value);
  }
  kw = std::move(kept);
  // Each overload tried converts the same recorded tensors: read each file
  // once (the runs clone what they are given, so the tensors can be shared).
  std::map<const PyValue*, at::Tensor> loaded;
  TensorLoader load_once = [&](const PyValue& dict) -> StatusOr<at::Tensor> {
    if (auto it = loaded.find(&dict); it != loaded.end()) return it->second;
    StatusOr<at::Tensor> t = load(dict);
    if (t.ok()) loaded.emplace(&dict, *t);
    return t;
  };
  std::string why;
  std::optional<BoundCall> best;
  int best_score = 0;
  for (const auto& [name, overload] : ops) {
    std::vector<std::string> overloads;
    if (entry.Find("aten") != nullptr) {
      overloads.push_back(overload);
    } else if (const std::vector<std::string>* all = Overloads(name)) {
      overloads = *all;
    }
    for (const std::string& ov : overloads) {
      c10::optional<c10::OperatorHandle> op =
          c10::Dispatcher::singleton().findSchema({name, ov});
      if (!op) continue;
      Binder b(load_once);
      StatusOr<std::vector<c10::IValue>> args = BindSchema(
          op->schema(), pos, kw, constants, entry.Find("aten") != nullptr, &b);
      std::string full = FullName({name, ov});
      if (!args.ok()) {
        if (args.status().code() == StatusCode::kNotFound ||
            args.status().code() == StatusCode::kIoError ||
            args.status().code() == StatusCode::kCorruption) {
          return args.status();  // a tensor file: the same for every overload
        }
        if (why.empty()) why = full + ": " + args.status().message();
        continue;
      }
      // Prefer the overload that needs no number wrapped as a tensor and no
      // varargs packed into a list (split(x, 16) is split.Tensor, not
      // split.sizes), then the first.
      int score = 100 - b.wrapped_numbers() - b.packed();
      if (!best || score > best_score) {
        best = BoundCall{*op, full, std::move(*args)};
        best_score = score;
      }
    }
  }
  if (best) return std::move(*best);
  if (why.empty()) {
    return Status::NotSupported("no ATen operator " + api_desc);
  }
  return Status::NotSupported("the recorded arguments fit no overload of " +
                              api_desc + " (" + why + ")");
}

}  // namespace lockstep::replay
