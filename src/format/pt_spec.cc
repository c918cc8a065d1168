// ParsePtTensorSpec: from an unpickled data.pkl to the storage and view of
// one tensor, checking every argument's type.
#include <optional>

#include "lockstep/format/pt_reader.h"

namespace lockstep {
namespace {

using Kind = PickleObject::Kind;
using Args = std::vector<const PickleObject*>;

constexpr int kMaxWrapping = 8;  // _rebuild_parameter(...) nesting
constexpr size_t kMaxDims = 64;

Status WrongArg(const std::string& subject, std::string_view func,
                std::string_view what, const PickleObject& got) {
  return Status::Corruption(
      subject,
      std::string(func) + ": " + std::string(what) + " is " + got.Describe());
}

StatusOr<int64_t> NonNegativeInt(const PickleObject& o,
                                 const std::string& subject,
                                 std::string_view what) {
  if (o.kind != Kind::kInt || o.int_value < 0) {
    return WrongArg(subject, "_rebuild_tensor_v2",
                    std::string(what) + ", expected an int >= 0,", o);
  }
  return o.int_value;
}

StatusOr<std::vector<int64_t>> IntTuple(const PickleObject& o,
                                        const std::string& subject,
                                        std::string_view what) {
  if (o.kind != Kind::kTuple) {
    return WrongArg(subject, "_rebuild_tensor_v2",
                    std::string(what) + ", expected a tuple,", o);
  }
  if (o.items.size() > kMaxDims) {
    return Status::NotSupported(subject, std::string(what) + " has " +
                                             std::to_string(o.items.size()) +
                                             " dims (at most 64)");
  }
  std::vector<int64_t> out;
  for (const PickleObject* item : o.items) {
    LOCKSTEP_ASSIGN_OR_RETURN(int64_t v, NonNegativeInt(*item, subject, what));
    out.push_back(v);
  }
  return out;
}

// persistent_id(('storage', torch.FloatStorage, key, location, numel)).
Status ParseStorage(const PickleObject& o, const std::string& subject,
                    PtTensorSpec* spec) {
  const PickleObject* pid = o.kind == Kind::kPersistentId ? o.items[0] : &o;
  const Args& t = pid->items;
  if (o.kind != Kind::kPersistentId || pid->kind != Kind::kTuple ||
      t.size() != 5 || t[0]->kind != Kind::kStr || t[0]->str != "storage") {
    return WrongArg(subject, "_rebuild_tensor_v2",
                    "storage, expected persistent_id(('storage', ...)),", o);
  }
  const PickleObject& type = *t[1];
  auto dtype = type.kind == Kind::kGlobal && type.module == "torch"
                   ? DTypeFromTorchStorage(type.name)
                   : std::nullopt;
  if (!dtype) {
    return Status::NotSupported(
        subject, "storage type " + type.Repr(2, 80) + " is not supported");
  }
  if (t[2]->kind != Kind::kStr || t[3]->kind != Kind::kStr) {
    return WrongArg(subject, "persistent_id", "storage key or location", *pid);
  }
  spec->dtype = *dtype;
  spec->storage_key = t[2]->str;
  spec->location = t[3]->str;
  LOCKSTEP_ASSIGN_OR_RETURN(spec->storage_numel,
                            NonNegativeInt(*t[4], subject, "storage numel"));
  return Status::Ok();
}

// _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
//                    backward_hooks[, metadata])
Status ParseRebuildTensorV2(const Args& args, const std::string& subject,
                            PtTensorSpec* spec) {
  if (args.size() != 6 && args.size() != 7) {
    return Status::Corruption(subject, "_rebuild_tensor_v2 has " +
                                           std::to_string(args.size()) +
                                           " arguments, expected 6 or 7");
  }
  LOCKSTEP_RETURN_IF_ERROR(ParseStorage(*args[0], subject, spec));
  LOCKSTEP_ASSIGN_OR_RETURN(spec->storage_offset,
                            NonNegativeInt(*args[1], subject, "offset"));
  LOCKSTEP_ASSIGN_OR_RETURN(spec->shape, IntTuple(*args[2], subject, "size"));
  LOCKSTEP_ASSIGN_OR_RETURN(spec->stride,
                            IntTuple(*args[3], subject, "stride"));
  if (spec->shape.size() != spec->stride.size()) {
    return Status::Corruption(
        subject, "_rebuild_tensor_v2: size " + ShapeToString(spec->shape) +
                     " and stride " + ShapeToString(spec->stride) +
                     " differ in length");
  }
  if (args[4]->kind != Kind::kBool) {
    return WrongArg(subject, "_rebuild_tensor_v2", "requires_grad", *args[4]);
  }
  spec->requires_grad = args[4]->int_value != 0;
  return Status::Ok();
}

Status NotATensor(std::string what, const std::string& subject) {
  return Status::NotSupported(subject, "holds " + what +
                                           ", not a single dense tensor "
                                           "(torch._utils._rebuild_tensor_v2)");
}

// A call not yet interpreted: callable(*args).
struct Call {
  const PickleObject* callable;
  const Args* args;
};

// When `c` wraps a tensor (nn.Parameter or a Tensor subclass), returns the
// call that makes the tensor inside and records what the wrapper says.
std::optional<Call> Unwrap(const Call& c, PtTensorSpec* spec,
                           std::optional<bool>* requires_grad) {
  const Args& a = *c.args;
  // _rebuild_parameter(data, requires_grad, backward_hooks[, state])
  if (c.callable->IsGlobal("torch._utils", "_rebuild_parameter") ||
      c.callable->IsGlobal("torch._utils", "_rebuild_parameter_with_state")) {
    if (a.size() < 3 || a[0]->kind != Kind::kCall ||
        a[1]->kind != Kind::kBool) {
      return std::nullopt;
    }
    spec->is_parameter = true;
    if (!requires_grad->has_value()) *requires_grad = a[1]->int_value != 0;
    return Call{a[0]->items[0], &a[0]->args()};
  }
  // _rebuild_from_type_v2(func, new_type, args, state)
  if (c.callable->IsGlobal("torch._tensor", "_rebuild_from_type_v2")) {
    if (a.size() != 4 || a[2]->kind != Kind::kTuple) return std::nullopt;
    return Call{a[0], &a[2]->items};
  }
  return std::nullopt;
}

}  // namespace

StatusOr<PtTensorSpec> ParsePtTensorSpec(const PickleObject& root,
                                         const std::string& subject) {
  if (root.kind != Kind::kCall) {
    std::string what = root.Describe();
    if (root.kind == Kind::kDict) what += " (a state_dict or checkpoint?)";
    return NotATensor(what, subject);
  }
  PtTensorSpec spec;
  std::optional<bool> requires_grad;
  Call call{root.items[0], &root.args()};
  for (int depth = 0; depth < kMaxWrapping; ++depth) {
    if (call.callable->IsGlobal("torch._utils", "_rebuild_tensor_v2")) {
      LOCKSTEP_RETURN_IF_ERROR(
          ParseRebuildTensorV2(*call.args, subject, &spec));
      if (requires_grad) spec.requires_grad = *requires_grad;
      return spec;
    }
    std::optional<Call> inner = Unwrap(call, &spec, &requires_grad);
    if (!inner)
      return NotATensor("a call of " + call.callable->Repr(2, 80), subject);
    call = *inner;
  }
  return Status::NotSupported(subject, "tensor wrapped more than " +
                                           std::to_string(kMaxWrapping) +
                                           " levels deep");
}

}  // namespace lockstep
