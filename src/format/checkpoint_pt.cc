// ReadTorchCheckpoint: a torch.save'd object (a state_dict, a training
// checkpoint of nested dicts) flattened into named tensors and values.
#include <string>
#include <utility>

#include "lockstep/format/checkpoint.h"
#include "lockstep/format/pt_reader.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace checkpoint_pt_internal {

using Kind = PickleObject::Kind;

constexpr int kMaxDepth = 100;
// Objects visited in all: memo references can make a small pickle a DAG
// of exponential size.
constexpr size_t kMaxVisits = size_t{1} << 20;

// A call that rebuilds a tensor (torch._utils._rebuild_*, torch._tensor.*).
bool IsTensorCall(const PickleObject& o) {
  if (o.kind != Kind::kCall || o.items.empty()) return false;
  const PickleObject& f = *o.items[0];
  return f.kind == Kind::kGlobal &&
         (f.module == "torch._utils" || f.module == "torch._tensor") &&
         f.name.rfind("_rebuild", 0) == 0;
}

// A dict key as Python's str() prints it.
std::string KeyString(const PickleObject& k) {
  switch (k.kind) {
    case Kind::kStr:
      return k.str;
    case Kind::kInt:
      return std::to_string(k.int_value);
    case Kind::kBool:
      return k.int_value ? "True" : "False";
    case Kind::kNone:
      return "None";
    case Kind::kFloat:
      return PyFloatRepr(k.float_value);
    default:
      return k.Repr(2, 80);
  }
}

bool IsContainer(const PickleObject& o) {
  return o.kind == Kind::kDict || o.kind == Kind::kList ||
         o.kind == Kind::kTuple || IsTensorCall(o);
}

// A leaf as a value, and its Python type name.
PyValue ToValue(const PickleObject& o, std::string* type, int depth) {
  switch (o.kind) {
    case Kind::kNone:
      *type = "NoneType";
      return PyValue();
    case Kind::kBool:
      *type = "bool";
      return PyValue::Bool(o.int_value != 0);
    case Kind::kInt:
      *type = "int";
      return PyValue::Int(o.int_value);
    case Kind::kFloat:
      *type = "float";
      return PyValue::Float(o.float_value);
    case Kind::kStr:
      *type = "str";
      return PyValue::Str(o.str);
    case Kind::kTuple:
    case Kind::kList: {
      *type = o.kind == Kind::kTuple ? "tuple" : "list";
      std::vector<PyValue> items;
      std::string ignored;
      if (depth < 4) {
        for (const PickleObject* i : o.items)
          items.push_back(ToValue(*i, &ignored, depth + 1));
        return PyValue::List(std::move(items));
      }
      return PyValue::Str(o.Repr(2, 200));
    }
    case Kind::kCall:
      *type = o.items[0]->kind == Kind::kGlobal
                  ? o.items[0]->module + "." + o.items[0]->name
                  : "object";
      return PyValue::Str(o.Repr(3, 200));
    case Kind::kBytes:
      *type = "bytes";
      return PyValue::Str(o.Repr(1, 200));
    default:
      *type = std::string(PickleKindName(o.kind));
      return PyValue::Str(o.Repr(2, 200));
  }
}

class Flattener {
 public:
  Flattener(const PtArchive& archive, const PtReadOptions& options,
            Checkpoint* out)
      : archive_(archive), options_(options), out_(out) {}

  Status Visit(const PickleObject& o, const std::string& name, int depth) {
    if (depth > kMaxDepth || ++visits_ > kMaxVisits) {
      return Status::NotSupported(
          archive_.subject(), "'" + name + "' is nested too deeply (over " +
                                  std::to_string(kMaxDepth) + " levels or " +
                                  std::to_string(kMaxVisits) + " objects)");
    }
    if (IsTensorCall(o)) return AddTensor(o, name);
    if (o.kind == Kind::kDict) {
      for (size_t i = 0; i + 1 < o.items.size(); i += 2) {
        std::string key = KeyString(*o.items[i]);
        LOCKSTEP_RETURN_IF_ERROR(Visit(
            *o.items[i + 1], name.empty() ? key : name + "." + key, depth + 1));
      }
      return Status::Ok();
    }
    if (o.kind == Kind::kList || o.kind == Kind::kTuple) {
      bool nested = false;
      for (const PickleObject* i : o.items) nested = nested || IsContainer(*i);
      if (nested) {
        for (size_t i = 0; i < o.items.size(); ++i) {
          std::string key = std::to_string(i);
          LOCKSTEP_RETURN_IF_ERROR(Visit(
              *o.items[i], name.empty() ? key : name + "." + key, depth + 1));
        }
        return Status::Ok();
      }
    }
    CheckpointEntry e;
    e.name = name.empty() ? "value" : name;
    e.value = ToValue(o, &e.type_name, 0);
    out_->entries.push_back(std::move(e));
    return Status::Ok();
  }

 private:
  Status AddTensor(const PickleObject& o, const std::string& name) {
    std::string subject = archive_.subject() + ": '" + name + "'";
    LOCKSTEP_ASSIGN_OR_RETURN(PtTensorSpec spec, ParsePtTensorSpec(o, subject));
    CheckpointEntry e;
    e.name = name.empty() ? "tensor" : name;
    e.is_tensor = true;
    LOCKSTEP_ASSIGN_OR_RETURN(e.tensor,
                              archive_.ReadTensor(spec, subject, options_));
    out_->entries.push_back(std::move(e));
    return Status::Ok();
  }

  const PtArchive& archive_;
  const PtReadOptions& options_;
  Checkpoint* out_;
  size_t visits_ = 0;
};

}  // namespace checkpoint_pt_internal

StatusOr<Checkpoint> ReadTorchCheckpoint(std::string_view bytes,
                                         std::shared_ptr<const void> owner,
                                         const std::string& name,
                                         const PtReadOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(PtArchive archive,
                            PtArchive::Open(bytes, std::move(owner), name));
  Checkpoint c;
  c.path = name;
  c.format = "torch.save";
  checkpoint_pt_internal::Flattener f(archive, options, &c);
  LOCKSTEP_RETURN_IF_ERROR(f.Visit(archive.root(), "", 0));
  return c;
}

}  // namespace lockstep
