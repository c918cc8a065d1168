// Unpickle: a small, safe pickle virtual machine for the subset of Python's
// pickle protocols 2-5 that torch.save emits for tensors. It never imports
// or calls anything: GLOBAL and STACK_GLOBAL give a `kGlobal` object naming
// module and attribute, and REDUCE gives a `kCall` object recording callable
// and arguments for the caller to interpret. The one exception is
// `collections.OrderedDict()`, which becomes a `kDict` so that SETITEMS can
// fill it, as it does in Python.
//
// A tensor's data.pkl decodes to (protocol 2, as torch 1.13 writes it):
//   call(global torch._utils._rebuild_tensor_v2,
//        (persistent_id(('storage', global torch.FloatStorage, '0', 'cpu',
//                        numel)),
//         storage_offset, (size...), (stride...), requires_grad,
//         call(global collections.OrderedDict, ())))
//
// Opcodes supported (Lib/pickletools.py names): PROTO FRAME STOP MARK POP
// POP_MARK DUP NONE NEWTRUE NEWFALSE BININT BININT1 BININT2 LONG1 LONG4
// BINFLOAT BINUNICODE SHORT_BINUNICODE BINUNICODE8 BINBYTES SHORT_BINBYTES
// BINBYTES8 EMPTY_TUPLE TUPLE TUPLE1 TUPLE2 TUPLE3 EMPTY_LIST LIST APPEND
// APPENDS EMPTY_DICT DICT SETITEM SETITEMS GLOBAL STACK_GLOBAL REDUCE BUILD
// BINPERSID BINPUT LONG_BINPUT BINGET LONG_BINGET MEMOIZE. Any other opcode
// gives NotSupported naming it. Integers wider than 64 bits give
// NotSupported.
//
// Safety: the machine is a loop (no recursion); stack, mark stack, memo and
// object count are bounded by UnpickleLimits and by the input length (each
// opcode creates at most one object), so memory is linear in the input.
// Objects may form cycles (a list appended to itself); they live in an arena
// owned by Unpickled, so cycles leak nothing.
//
// Thread safety: Unpickle is reentrant; an Unpickled is immutable and may be
// read from many threads.
#ifndef LOCKSTEP_FORMAT_PICKLE_H_
#define LOCKSTEP_FORMAT_PICKLE_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

// One Python object made by the pickle machine. A plain record; which fields
// mean something depends on `kind`.
struct PickleObject {
  enum class Kind {
    kNone,
    kBool,          // int_value is 0 or 1
    kInt,           // int_value
    kFloat,         // float_value
    kStr,           // str (UTF-8 bytes as pickled; not validated)
    kBytes,         // str (raw bytes)
    kTuple,         // items
    kList,          // items
    kDict,          // items: key0, value0, key1, value1, ... (pickle order);
                    // type: the class global when made by REDUCE, else null;
                    // state: from BUILD (only when made by REDUCE: an
                    // OrderedDict's attributes, as a state_dict's _metadata)
    kGlobal,        // module, name
    kCall,          // items: {callable, args (a kTuple)}; state: from BUILD
    kPersistentId,  // items: {the persistent id}
  };

  Kind kind = Kind::kNone;
  int64_t int_value = 0;
  double float_value = 0;
  std::string str;
  std::string module;
  std::string name;
  std::vector<const PickleObject*> items;
  const PickleObject* state = nullptr;
  const PickleObject* type = nullptr;

  // True for a kGlobal naming `module`.`attr`.
  bool IsGlobal(std::string_view module_name, std::string_view attr) const;
  // True for a kCall whose callable is the global `module`.`attr`.
  bool IsCallOf(std::string_view module_name, std::string_view attr) const;
  // For kCall: the arguments tuple's items. REQUIRES: kind == kCall.
  const std::vector<const PickleObject*>& args() const;
  // A short description for messages: "int 5", "str 'cpu'", "tuple of 2",
  // "global torch.FloatStorage", "call of torch._utils._rebuild_tensor_v2".
  std::string Describe() const;
  // Python-like repr, at most `max_depth` levels deep ("..." below) and about
  // `max_chars` long: "torch._utils._rebuild_tensor_v2(persistent_id((
  // 'storage', torch.FloatStorage, '0', 'cpu', 4)), 0, (4,), (1,), False,
  // OrderedDict())".
  std::string Repr(int max_depth = 12, size_t max_chars = 4096) const;
};

// Name of a kind for messages: "None", "int", "tuple", "persistent id", ...
std::string_view PickleKindName(PickleObject::Kind kind);

// The result of unpickling: the object STOP returned, and the arena that
// owns it and everything it refers to. Movable; the objects do not move.
class Unpickled {
 public:
  Unpickled() = default;
  const PickleObject& root() const { return *root_; }
  size_t object_count() const { return arena_ ? arena_->size() : 0; }

 private:
  friend class PickleMachine;
  std::unique_ptr<std::deque<PickleObject>> arena_;
  const PickleObject* root_ = nullptr;
};

// Bounds on the work one pickle may cause.
struct UnpickleLimits {
  size_t max_stack = size_t{1} << 20;    // stack entries
  size_t max_marks = size_t{1} << 16;    // nested MARKs
  size_t max_memo = size_t{1} << 20;     // memo entries
  size_t max_objects = size_t{1} << 20;  // objects created
};

// Runs the pickle machine over `bytes` up to the first STOP (later bytes are
// ignored, as Python does). `subject` names the pickle in messages
// ("x.pt: zip entry 'x/data.pkl'"); messages add the byte offset and opcode:
//   "x.pt: zip entry 'x/data.pkl': byte 98: BINPERSID: stack is empty".
// Returns Corruption for malformed or truncated input, NotSupported for
// opcodes outside the subset and when a limit is exceeded.
StatusOr<Unpickled> Unpickle(std::string_view bytes, std::string_view subject,
                             const UnpickleLimits& limits = {});

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_PICKLE_H_
