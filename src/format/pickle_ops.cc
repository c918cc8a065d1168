// The pickle machine's opcode handlers. Each reads its argument bytes, pops
// and pushes as CPython's _pickle.c does, and fails with a Status where
// Python would raise.
#include <bit>
#include <cstring>

#include "format/pickle_machine.h"
#include "format/pickle_opcodes.h"

namespace lockstep {

Status PickleMachine::OpProto() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t version, TakeLe(1));
  if (version > 5) {
    return Fail(StatusCode::kNotSupported,
                "protocol " + std::to_string(version) + " (only 2 to 5)");
  }
  return Status::Ok();
}

// Frames (protocol 4) only group opcodes for buffered reading; the machine
// reads straight through them after checking the length.
Status PickleMachine::OpFrame() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t len, TakeLe(8));
  if (len > in_.size() - pos_) {
    return Corrupt("frame of " + std::to_string(len) + " bytes, but " +
                   std::to_string(in_.size() - pos_) + " remain");
  }
  return Status::Ok();
}

Status PickleMachine::OpStop() {
  LOCKSTEP_ASSIGN_OR_RETURN(result_, Pop());
  return Status::Ok();
}

Status PickleMachine::OpMark() {
  if (marks_.size() >= limits_.max_marks) {
    return Fail(StatusCode::kNotSupported,
                "more than " + std::to_string(limits_.max_marks) +
                    " nested MARKs (limit)");
  }
  marks_.push_back(stack_.size());
  return Status::Ok();
}

// Python pops the topmost mark instead when nothing lies above it.
Status PickleMachine::OpPop() {
  if (stack_.size() > Floor()) {
    stack_.pop_back();
    return Status::Ok();
  }
  if (marks_.empty()) return Corrupt("stack is empty");
  marks_.pop_back();
  return Status::Ok();
}

Status PickleMachine::OpPopMark() { return PopMark().status(); }

Status PickleMachine::OpDup() {
  if (stack_.size() <= Floor()) return Corrupt("stack is empty");
  return Push(stack_.back());
}

Status PickleMachine::PushBool(bool b) {
  PickleObject* o = New(Kind::kBool);
  o->int_value = b;
  return Push(o);
}

Status PickleMachine::PushInt(int64_t v) {
  PickleObject* o = New(Kind::kInt);
  o->int_value = v;
  return Push(o);
}

Status PickleMachine::OpBinInt() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t v, TakeLe(4));
  return PushInt(static_cast<int32_t>(static_cast<uint32_t>(v)));
}

Status PickleMachine::OpBinInt1() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t v, TakeLe(1));
  return PushInt(static_cast<int64_t>(v));
}

Status PickleMachine::OpBinInt2() {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t v, TakeLe(2));
  return PushInt(static_cast<int64_t>(v));
}

// LONG1 / LONG4: a length, then that many bytes of little-endian two's
// complement. Python writes the fewest bytes, so an int64 needs at most 8.
Status PickleMachine::TakeLong(size_t len_bytes) {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t n, TakeLe(len_bytes));
  if (len_bytes == 4 && n > INT32_MAX) {
    return Corrupt("negative byte count " +
                   std::to_string(static_cast<int32_t>(n)));
  }
  if (n > 8) {
    return Fail(StatusCode::kNotSupported,
                "integer of " + std::to_string(n) +
                    " bytes (only 64-bit integers are supported)");
  }
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t v, TakeLe(n));
  if (n > 0 && n < 8 && (v >> (8 * n - 1)) != 0) v |= ~uint64_t{0} << (8 * n);
  return PushInt(static_cast<int64_t>(v));
}

// BINFLOAT is the only big-endian field in a pickle.
Status PickleMachine::OpBinFloat() {
  LOCKSTEP_ASSIGN_OR_RETURN(std::string_view b, Take(8));
  uint64_t bits = 0;
  for (char c : b) bits = (bits << 8) | static_cast<uint8_t>(c);
  PickleObject* o = New(Kind::kFloat);
  o->float_value = std::bit_cast<double>(bits);
  return Push(o);
}

// A length of `len_bytes` bytes, then the string's bytes.
Status PickleMachine::PushString(Kind kind, size_t len_bytes) {
  LOCKSTEP_ASSIGN_OR_RETURN(uint64_t n, TakeLe(len_bytes));
  LOCKSTEP_ASSIGN_OR_RETURN(std::string_view s, Take(n));
  PickleObject* o = New(kind);
  o->str.assign(s);
  return Push(o);
}

Status PickleMachine::PushTuple(size_t n) {
  if (stack_.size() - Floor() < n) {
    return Corrupt("needs " + std::to_string(n) + " items, stack has " +
                   std::to_string(stack_.size() - Floor()));
  }
  PickleObject* t = New(Kind::kTuple);
  t->items.assign(stack_.end() - static_cast<ptrdiff_t>(n), stack_.end());
  stack_.resize(stack_.size() - n);
  return Push(t);
}

Status PickleMachine::PushFromMark(Kind kind) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::vector<PickleObject*> items, PopMark());
  PickleObject* o = New(kind);
  o->items.assign(items.begin(), items.end());
  return Push(o);
}

// APPENDS and SETITEMS: the items above the mark go into the list or dict
// just below it.
Status PickleMachine::ExtendFromMark(Kind kind) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::vector<PickleObject*> items, PopMark());
  if (kind == Kind::kDict && items.size() % 2 != 0) {
    return Corrupt("odd number of items (" + std::to_string(items.size()) +
                   ") for key-value pairs");
  }
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * target, Top(kind));
  target->items.insert(target->items.end(), items.begin(), items.end());
  return Status::Ok();
}

Status PickleMachine::OpAppend() {
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * value, Pop());
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * list, Top(Kind::kList));
  list->items.push_back(value);
  return Status::Ok();
}

Status PickleMachine::OpDict() {
  LOCKSTEP_ASSIGN_OR_RETURN(std::vector<PickleObject*> items, PopMark());
  if (items.size() % 2 != 0) {
    return Corrupt("odd number of items (" + std::to_string(items.size()) +
                   ") for key-value pairs");
  }
  PickleObject* d = New(Kind::kDict);
  d->items.assign(items.begin(), items.end());
  return Push(d);
}

Status PickleMachine::OpSetItem() {
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * value, Pop());
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * key, Pop());
  LOCKSTEP_ASSIGN_OR_RETURN(PickleObject * dict, Top(Kind::kDict));
  dict->items.push_back(key);
  dict->items.push_back(value);
  return Status::Ok();
}

}  // namespace lockstep
