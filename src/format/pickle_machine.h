// PickleMachine: the state of one run of the pickle machine (pickle.h).
// Private to src/format: pickle.cc holds the driver and stack helpers,
// pickle_ops.cc and pickle_ops_calls.cc the opcode handlers.
#ifndef LOCKSTEP_SRC_FORMAT_PICKLE_MACHINE_H_
#define LOCKSTEP_SRC_FORMAT_PICKLE_MACHINE_H_

#include <array>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockstep/format/pickle.h"

namespace lockstep {

class PickleMachine {
 public:
  PickleMachine(std::string_view in, std::string_view subject,
                const UnpickleLimits& limits)
      : in_(in),
        subject_(subject),
        limits_(limits),
        arena_(std::make_unique<std::deque<PickleObject>>()) {}

  StatusOr<Unpickled> Run();

 private:
  using Kind = PickleObject::Kind;
  using Handler = Status (PickleMachine::*)();
  static const std::pair<uint8_t, Handler> kOps[];  // opcode -> handler
  static const std::array<Handler, 256>& Handlers();

  // Errors name the subject, the opcode's byte offset and its name.
  Status Fail(StatusCode code, const std::string& problem) const;
  Status Corrupt(const std::string& problem) const {
    return Fail(StatusCode::kCorruption, problem);
  }
  StatusOr<std::string_view> Take(uint64_t n);
  StatusOr<uint64_t> TakeLe(size_t n);

  PickleObject* New(Kind kind) {
    PickleObject* o = &arena_->emplace_back();
    o->kind = kind;
    return o;
  }
  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  Status Push(PickleObject* o);
  Status PushNew(Kind kind) { return Push(New(kind)); }
  StatusOr<PickleObject*> Pop();
  StatusOr<PickleObject*> Top(Kind want);
  StatusOr<std::vector<PickleObject*>> PopMark();
  Status PushInt(int64_t v);
  Status PushString(Kind kind, size_t len_bytes);
  Status PushTuple(size_t n);
  Status PushFromMark(Kind kind);
  Status ExtendFromMark(Kind kind);
  Status Put(uint64_t key);
  Status Get(uint64_t key);
  Status TakeLong(size_t len_bytes);

  Status OpProto();
  Status OpFrame();
  Status OpStop();
  Status OpMark();
  Status OpPop();
  Status OpPopMark();
  Status OpDup();
  Status OpNone() { return PushNew(Kind::kNone); }
  Status OpTrue() { return PushBool(true); }
  Status OpFalse() { return PushBool(false); }
  Status PushBool(bool b);
  Status OpBinInt();
  Status OpBinInt1();
  Status OpBinInt2();
  Status OpLong1() { return TakeLong(1); }
  Status OpLong4() { return TakeLong(4); }
  Status OpBinFloat();
  Status OpBinUnicode() { return PushString(Kind::kStr, 4); }
  Status OpShortBinUnicode() { return PushString(Kind::kStr, 1); }
  Status OpBinUnicode8() { return PushString(Kind::kStr, 8); }
  Status OpBinBytes() { return PushString(Kind::kBytes, 4); }
  Status OpShortBinBytes() { return PushString(Kind::kBytes, 1); }
  Status OpBinBytes8() { return PushString(Kind::kBytes, 8); }
  Status OpEmptyTuple() { return PushNew(Kind::kTuple); }
  Status OpTuple() { return PushFromMark(Kind::kTuple); }
  Status OpTuple1() { return PushTuple(1); }
  Status OpTuple2() { return PushTuple(2); }
  Status OpTuple3() { return PushTuple(3); }
  Status OpEmptyList() { return PushNew(Kind::kList); }
  Status OpList() { return PushFromMark(Kind::kList); }
  Status OpAppend();
  Status OpAppends() { return ExtendFromMark(Kind::kList); }
  Status OpEmptyDict() { return PushNew(Kind::kDict); }
  Status OpDict();
  Status OpSetItem();
  Status OpSetItems() { return ExtendFromMark(Kind::kDict); }
  Status OpGlobal();
  Status OpStackGlobal();
  Status OpReduce();
  Status OpBuild();
  Status OpBinPersId();
  Status OpBinPut();
  Status OpLongBinPut();
  Status OpMemoize() { return Put(memo_.size()); }
  Status OpBinGet();
  Status OpLongBinGet();

  std::string_view in_;
  std::string subject_;
  UnpickleLimits limits_;
  size_t pos_ = 0;     // next byte to read
  size_t op_pos_ = 0;  // offset of the opcode being run
  uint8_t op_ = 0;
  std::unique_ptr<std::deque<PickleObject>> arena_;
  std::vector<PickleObject*> stack_;
  std::vector<size_t> marks_;  // stack sizes at each MARK
  std::unordered_map<uint64_t, PickleObject*> memo_;
  PickleObject* result_ = nullptr;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_FORMAT_PICKLE_MACHINE_H_
