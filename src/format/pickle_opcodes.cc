#include "format/pickle_opcodes.h"

#include <array>
#include <utility>

namespace lockstep::pickle_op {
namespace {

constexpr std::array<std::pair<uint8_t, std::string_view>, 68> kNames = {{
    {kMark, "MARK"},
    {kStop, "STOP"},
    {kPop, "POP"},
    {kPopMark, "POP_MARK"},
    {kDup, "DUP"},
    {kFloat, "FLOAT"},
    {kInt, "INT"},
    {kBinInt, "BININT"},
    {kBinInt1, "BININT1"},
    {kLong, "LONG"},
    {kBinInt2, "BININT2"},
    {kNone, "NONE"},
    {kPersId, "PERSID"},
    {kBinPersId, "BINPERSID"},
    {kReduce, "REDUCE"},
    {kString, "STRING"},
    {kBinString, "BINSTRING"},
    {kShortBinString, "SHORT_BINSTRING"},
    {kUnicode, "UNICODE"},
    {kBinUnicode, "BINUNICODE"},
    {kAppend, "APPEND"},
    {kBuild, "BUILD"},
    {kGlobal, "GLOBAL"},
    {kDict, "DICT"},
    {kEmptyDict, "EMPTY_DICT"},
    {kAppends, "APPENDS"},
    {kGet, "GET"},
    {kBinGet, "BINGET"},
    {kInst, "INST"},
    {kLongBinGet, "LONG_BINGET"},
    {kList, "LIST"},
    {kEmptyList, "EMPTY_LIST"},
    {kObj, "OBJ"},
    {kPut, "PUT"},
    {kBinPut, "BINPUT"},
    {kLongBinPut, "LONG_BINPUT"},
    {kSetItem, "SETITEM"},
    {kTuple, "TUPLE"},
    {kEmptyTuple, "EMPTY_TUPLE"},
    {kSetItems, "SETITEMS"},
    {kBinFloat, "BINFLOAT"},
    {kProto, "PROTO"},
    {kNewObj, "NEWOBJ"},
    {kExt1, "EXT1"},
    {kExt2, "EXT2"},
    {kExt4, "EXT4"},
    {kTuple1, "TUPLE1"},
    {kTuple2, "TUPLE2"},
    {kTuple3, "TUPLE3"},
    {kNewTrue, "NEWTRUE"},
    {kNewFalse, "NEWFALSE"},
    {kLong1, "LONG1"},
    {kLong4, "LONG4"},
    {kBinBytes, "BINBYTES"},
    {kShortBinBytes, "SHORT_BINBYTES"},
    {kShortBinUnicode, "SHORT_BINUNICODE"},
    {kBinUnicode8, "BINUNICODE8"},
    {kBinBytes8, "BINBYTES8"},
    {kEmptySet, "EMPTY_SET"},
    {kAddItems, "ADDITEMS"},
    {kFrozenSet, "FROZENSET"},
    {kNewObjEx, "NEWOBJ_EX"},
    {kStackGlobal, "STACK_GLOBAL"},
    {kMemoize, "MEMOIZE"},
    {kFrame, "FRAME"},
    {kByteArray8, "BYTEARRAY8"},
    {kNextBuffer, "NEXT_BUFFER"},
    {kReadOnlyBuffer, "READONLY_BUFFER"},
}};

}  // namespace

std::string_view Name(uint8_t op) {
  for (const auto& [code, name] : kNames) {
    if (code == op) return name;
  }
  return "";
}

}  // namespace lockstep::pickle_op
