// ReadTorchCheckpoint: a torch.save'd object (a state_dict, a training
// checkpoint of nested dicts) flattened into named tensors and values.
#include <string>
#include <utility>
#include <vector>

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
// Longest entry name ("model.layers.0.attn.weight" is 26 bytes).
constexpr size_t kMaxNameBytes = 4096;

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

// A leaf as a value, and its Python type name. Strings are charged to
// `budget` as they are copied: memo references let a small pickle name one
// string any number of times.
Status ToValue(const PickleObject& o, int depth, ReadBudget* budget,
               std::string* type, PyValue* out) {
  switch (o.kind) {
    case Kind::kNone:
      *type = "NoneType";
      *out = PyValue();
      return Status::Ok();
    case Kind::kBool:
      *type = "bool";
      *out = PyValue::Bool(o.int_value != 0);
      return Status::Ok();
    case Kind::kInt:
      *type = "int";
      *out = PyValue::Int(o.int_value);
      return Status::Ok();
    case Kind::kFloat:
      *type = "float";
      *out = PyValue::Float(o.float_value);
      return Status::Ok();
    case Kind::kStr:
      *type = "str";
      LOCKSTEP_RETURN_IF_ERROR(
          budget->ChargeBytes(o.str.size(), "a copy of a str value"));
      *out = PyValue::Str(o.str);
      return Status::Ok();
    case Kind::kTuple:
    case Kind::kList: {
      *type = o.kind == Kind::kTuple ? "tuple" : "list";
      if (depth >= 4) break;
      std::vector<PyValue> items(o.items.size());
      LOCKSTEP_RETURN_IF_ERROR(budget->ChargeBytes(
          items.size() * sizeof(PyValue), "a copy of a list value"));
      std::string ignored;
      for (size_t i = 0; i < items.size(); ++i) {
        LOCKSTEP_RETURN_IF_ERROR(
            ToValue(*o.items[i], depth + 1, budget, &ignored, &items[i]));
      }
      *out = PyValue::List(std::move(items));
      return Status::Ok();
    }
    case Kind::kCall:
      *type = o.items[0]->kind == Kind::kGlobal
                  ? o.items[0]->module + "." + o.items[0]->name
                  : "object";
      *out = PyValue::Str(o.Repr(3, 200));
      return Status::Ok();
    case Kind::kBytes:
      *type = "bytes";
      *out = PyValue::Str(o.Repr(1, 200));
      return Status::Ok();
    default:
      *type = std::string(PickleKindName(o.kind));
      break;
  }
  *out = PyValue::Str(o.Repr(2, 200));
  return Status::Ok();
}

class Flattener {
 public:
  Flattener(const PtArchive& archive, const PtReadOptions& options,
            Checkpoint* out)
      : archive_(archive), options_(options), out_(out) {}

  Status Visit(const PickleObject& o, const std::string& name, int depth) {
    if (depth > kMaxDepth || ++visits_ > kMaxVisits) {
      return Status::NotSupported(
          archive_.subject(), "'" + Abbreviate(name) +
                                  "' is nested too deeply (over " +
                                  std::to_string(kMaxDepth) + " levels or " +
                                  std::to_string(kMaxVisits) + " objects)");
    }
    if (IsTensorCall(o)) return AddTensor(o, name);
    bool container = o.kind == Kind::kDict || o.kind == Kind::kList ||
                     o.kind == Kind::kTuple;
    if (container) {
      for (const PickleObject* up : path_) {
        if (up == &o) {
          return Status::NotSupported(
              archive_.subject(),
              "'" + Abbreviate(name) + "' holds itself (a cycle)");
        }
      }
      path_.push_back(&o);
      StatusOr<bool> visited = VisitItems(o, name, depth);
      path_.pop_back();
      if (!visited.ok()) return visited.status();
      if (*visited) return Status::Ok();
    }
    CheckpointEntry e;
    e.name = name.empty() ? "value" : name;
    LOCKSTEP_RETURN_IF_ERROR(
        ToValue(o, 0, &archive_.budget(), &e.type_name, &e.value));
    out_->entries.push_back(std::move(e));
    return Status::Ok();
  }

 private:
  // The members of a dict, or the items of a list or tuple that holds a
  // container; false for other lists and tuples (they are one value).
  StatusOr<bool> VisitItems(const PickleObject& o, const std::string& name,
                            int depth) {
    if (o.kind == Kind::kDict) {
      for (size_t i = 0; i + 1 < o.items.size(); i += 2) {
        LOCKSTEP_ASSIGN_OR_RETURN(std::string child,
                                  ChildName(name, KeyString(*o.items[i])));
        LOCKSTEP_RETURN_IF_ERROR(Visit(*o.items[i + 1], child, depth + 1));
      }
      return true;
    }
    bool nested = false;
    for (const PickleObject* i : o.items) nested = nested || IsContainer(*i);
    if (!nested) return false;
    for (size_t i = 0; i < o.items.size(); ++i) {
      LOCKSTEP_ASSIGN_OR_RETURN(std::string child,
                                ChildName(name, std::to_string(i)));
      LOCKSTEP_RETURN_IF_ERROR(Visit(*o.items[i], child, depth + 1));
    }
    return true;
  }

  // "name.key", charged to the budget; a name beyond kMaxNameBytes is
  // refused (names are torch's parameter paths, not data).
  StatusOr<std::string> ChildName(const std::string& name,
                                  const std::string& key) {
    size_t n = name.size() + 1 + key.size();
    if (n > kMaxNameBytes) {
      return Status::NotSupported(
          archive_.subject(),
          "the name '" + Abbreviate(name.empty() ? key : name + "." + key) +
              "' is longer than " + std::to_string(kMaxNameBytes) + " bytes");
    }
    LOCKSTEP_RETURN_IF_ERROR(archive_.budget().ChargeBytes(n, "names"));
    return name.empty() ? key : name + "." + key;
  }

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
  std::vector<const PickleObject*> path_;  // the containers being visited
};

}  // namespace checkpoint_pt_internal

StatusOr<Checkpoint> ReadTorchCheckpoint(std::string_view bytes,
                                         std::shared_ptr<const void> owner,
                                         const std::string& name,
                                         const PtReadOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(
      PtArchive archive,
      PtArchive::Open(bytes, std::move(owner), name, options.limits));
  Checkpoint c;
  c.path = name;
  c.format = "torch.save";
  checkpoint_pt_internal::Flattener f(archive, options, &c);
  LOCKSTEP_RETURN_IF_ERROR(f.Visit(archive.root(), "", 0));
  return c;
}

}  // namespace lockstep
