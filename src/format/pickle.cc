// The pickle machine: one handler per supported opcode, dispatched from a
// table. See pickle.h for the subset and the safety limits.
#include <utility>

#include "format/bytes.h"
#include "format/pickle_machine.h"
#include "format/pickle_opcodes.h"

namespace lockstep {

namespace op = pickle_op;

const std::pair<uint8_t, PickleMachine::Handler> PickleMachine::kOps[] = {
    {op::kProto, &PickleMachine::OpProto},
    {op::kFrame, &PickleMachine::OpFrame},
    {op::kStop, &PickleMachine::OpStop},
    {op::kMark, &PickleMachine::OpMark},
    {op::kPop, &PickleMachine::OpPop},
    {op::kPopMark, &PickleMachine::OpPopMark},
    {op::kDup, &PickleMachine::OpDup},
    {op::kNone, &PickleMachine::OpNone},
    {op::kNewTrue, &PickleMachine::OpTrue},
    {op::kNewFalse, &PickleMachine::OpFalse},
    {op::kBinInt, &PickleMachine::OpBinInt},
    {op::kBinInt1, &PickleMachine::OpBinInt1},
    {op::kBinInt2, &PickleMachine::OpBinInt2},
    {op::kLong1, &PickleMachine::OpLong1},
    {op::kLong4, &PickleMachine::OpLong4},
    {op::kBinFloat, &PickleMachine::OpBinFloat},
    {op::kBinUnicode, &PickleMachine::OpBinUnicode},
    {op::kShortBinUnicode, &PickleMachine::OpShortBinUnicode},
    {op::kBinUnicode8, &PickleMachine::OpBinUnicode8},
    {op::kBinBytes, &PickleMachine::OpBinBytes},
    {op::kShortBinBytes, &PickleMachine::OpShortBinBytes},
    {op::kBinBytes8, &PickleMachine::OpBinBytes8},
    {op::kEmptyTuple, &PickleMachine::OpEmptyTuple},
    {op::kTuple, &PickleMachine::OpTuple},
    {op::kTuple1, &PickleMachine::OpTuple1},
    {op::kTuple2, &PickleMachine::OpTuple2},
    {op::kTuple3, &PickleMachine::OpTuple3},
    {op::kEmptyList, &PickleMachine::OpEmptyList},
    {op::kList, &PickleMachine::OpList},
    {op::kAppend, &PickleMachine::OpAppend},
    {op::kAppends, &PickleMachine::OpAppends},
    {op::kEmptyDict, &PickleMachine::OpEmptyDict},
    {op::kDict, &PickleMachine::OpDict},
    {op::kSetItem, &PickleMachine::OpSetItem},
    {op::kSetItems, &PickleMachine::OpSetItems},
    {op::kGlobal, &PickleMachine::OpGlobal},
    {op::kStackGlobal, &PickleMachine::OpStackGlobal},
    {op::kReduce, &PickleMachine::OpReduce},
    {op::kBuild, &PickleMachine::OpBuild},
    {op::kBinPersId, &PickleMachine::OpBinPersId},
    {op::kBinPut, &PickleMachine::OpBinPut},
    {op::kLongBinPut, &PickleMachine::OpLongBinPut},
    {op::kMemoize, &PickleMachine::OpMemoize},
    {op::kBinGet, &PickleMachine::OpBinGet},
    {op::kLongBinGet, &PickleMachine::OpLongBinGet},
};

const std::array<PickleMachine::Handler, 256>& PickleMachine::Handlers() {
  static const std::array<Handler, 256> table = [] {
    std::array<Handler, 256> t{};
    for (const auto& [code, handler] : kOps) t[code] = handler;
    return t;
  }();
  return table;
}

StatusOr<Unpickled> PickleMachine::Run() {
  while (result_ == nullptr) {
    op_pos_ = pos_;
    if (pos_ >= in_.size()) {
      return Status::Corruption(subject_, "byte " + std::to_string(pos_) +
                                              ": pickle ends without STOP");
    }
    op_ = static_cast<uint8_t>(in_[pos_++]);
    if (arena_->size() >= limits_.max_objects) {
      return Fail(StatusCode::kNotSupported,
                  "more than " + std::to_string(limits_.max_objects) +
                      " objects (limit)");
    }
    Handler h = Handlers()[op_];
    if (h == nullptr) {
      std::string_view name = pickle_op::Name(op_);
      return Status::Corruption(
          subject_, "byte " + std::to_string(op_pos_) + ": " +
                        (name.empty() ? "not a pickle opcode: "
                                      : "unsupported pickle opcode " +
                                            std::string(name) + " ") +
                        internal::Hex(op_));
    }
    LOCKSTEP_RETURN_IF_ERROR((this->*h)());
  }
  Unpickled out;
  out.root_ = result_;
  out.arena_ = std::move(arena_);
  return out;
}

Status PickleMachine::Fail(StatusCode code, const std::string& problem) const {
  return Status(code, subject_,
                "byte " + std::to_string(op_pos_) + ": " +
                    std::string(pickle_op::Name(op_)) + ": " + problem);
}

StatusOr<std::string_view> PickleMachine::Take(uint64_t n) {
  if (!internal::InBounds(pos_, n, in_.size())) {
    return Corrupt("truncated: needs " + std::to_string(n) + " bytes, " +
                   std::to_string(in_.size() - pos_) + " left");
  }
  std::string_view s = in_.substr(pos_, n);
  pos_ += n;
  return s;
}

StatusOr<uint64_t> PickleMachine::TakeLe(size_t n) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::string_view b, Take(n));
  uint64_t v = 0;
  for (size_t i = n; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[i]);
  return v;
}

Status PickleMachine::Push(PickleObject* o) {
  if (stack_.size() >= limits_.max_stack) {
    return Fail(
        StatusCode::kNotSupported,
        "stack deeper than " + std::to_string(limits_.max_stack) + " (limit)");
  }
  stack_.push_back(o);
  return Status::Ok();
}

StatusOr<PickleObject*> PickleMachine::Pop() {
  if (stack_.size() <= Floor()) return Corrupt("stack is empty");
  PickleObject* o = stack_.back();
  stack_.pop_back();
  return o;
}

StatusOr<PickleObject*> PickleMachine::Top(Kind want) {
  if (stack_.size() <= Floor()) return Corrupt("stack is empty");
  PickleObject* o = stack_.back();
  if (o->kind != want) {
    return Corrupt("expected a " + std::string(PickleKindName(want)) +
                   " on the stack, found " + o->Describe());
  }
  return o;
}

StatusOr<std::vector<PickleObject*>> PickleMachine::PopMark() {
  if (marks_.empty()) return Corrupt("no MARK on the stack");
  std::vector<PickleObject*> items(stack_.begin() + marks_.back(),
                                   stack_.end());
  stack_.resize(marks_.back());
  marks_.pop_back();
  return items;
}

StatusOr<Unpickled> Unpickle(std::string_view bytes, std::string_view subject,
                             const UnpickleLimits& limits) {
  return PickleMachine(bytes, subject, limits).Run();
}

}  // namespace lockstep
