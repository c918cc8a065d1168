// The pickle machine's opcodes for globals, calls, persistent ids and the
// memo. Nothing is imported or called: globals and calls become objects
// that describe them.
#include "format/pickle_machine.h"

namespace lockstep {
namespace {

// Reads one '\n'-terminated line of GLOBAL's argument.
bool TakeLine(std::string_view in, size_t* pos, std::string* line) {
  size_t nl = in.find('\n', *pos);
  if (nl == std::string_view::npos) return false;
  line->assign(in.substr(*pos, nl - *pos));
  *pos = nl + 1;
  return true;
}

}  // namespace

Status PickleMachine::OpGlobal() {
  PickleObject* g = New(Kind::kGlobal);
  if (!TakeLine(in_, &pos_, &g->module) || !TakeLine(in_, &pos_, &g->name)) {
    return Corrupt("truncated: module and name need two lines");
  }
  return Push(g);
}

Status PickleMachine::OpStackGlobal() {
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * name, Pop());
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * module, Pop());
  if (module->kind != Kind::kStr || name->kind != Kind::kStr) {
    return Corrupt("module and name must be str, found " + module->Describe() +
                   " and " + name->Describe());
  }
  PickleObject* g = New(Kind::kGlobal);
  g->module = module->str;
  g->name = name->str;
  return Push(g);
}

// REDUCE records the call. collections.OrderedDict() is the one call made,
// because SETITEMS may fill the dict it returns.
Status PickleMachine::OpReduce() {
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * args, Pop());
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * callable, Pop());
  if (args->kind != Kind::kTuple) {
    return Corrupt("arguments must be a tuple, found " + args->Describe());
  }
  if (callable->IsGlobal("collections", "OrderedDict") && args->items.empty()) {
    PickleObject* d = New(Kind::kDict);
    d->type = callable;
    return Push(d);
  }
  PickleObject* call = New(Kind::kCall);
  call->items = {callable, args};
  return Push(call);
}

Status PickleMachine::OpBuild() {
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * state, Pop());
  if (stack_.size() <= Floor()) return Corrupt("stack is empty");
  PickleObject* target = stack_.back();
  // A dict made by REDUCE (an OrderedDict) may carry attributes: torch's
  // state_dict sets `_metadata`, which BUILD restores.
  bool dict_subclass = target->kind == Kind::kDict && target->type != nullptr;
  if (target->kind != Kind::kCall && !dict_subclass) {
    return Fail(
        StatusCode::kNotSupported,
        "setting the state of a " + std::string(PickleKindName(target->kind)));
  }
  target->state = state;
  return Status::Ok();
}

Status PickleMachine::OpBinPersId() {
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * pid, Pop());
  PickleObject* o = New(Kind::kPersistentId);
  o->items = {pid};
  return Push(o);
}

Status PickleMachine::Put(uint64_t key) {
  if (stack_.size() <= Floor()) return Corrupt("stack is empty");
  auto it = memo_.find(key);
  if (it == memo_.end() && memo_.size() >= limits_.max_memo) {
    return Fail(StatusCode::kNotSupported,
                "more than " + std::to_string(limits_.max_memo) +
                    " memo entries (limit)");
  }
  memo_[key] = stack_.back();
  return Status::Ok();
}

Status PickleMachine::Get(uint64_t key) {
  auto it = memo_.find(key);
  if (it == memo_.end()) {
    return Corrupt("memo key " + std::to_string(key) + " is not set");
  }
  return Push(it->second);
}

Status PickleMachine::OpBinPut() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t key, TakeLe(1));
  return Put(key);
}

Status PickleMachine::OpLongBinPut() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t key, TakeLe(4));
  return Put(key);
}

Status PickleMachine::OpBinGet() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t key, TakeLe(1));
  return Get(key);
}

Status PickleMachine::OpLongBinGet() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t key, TakeLe(4));
  return Get(key);
}

}  // namespace lockstep
