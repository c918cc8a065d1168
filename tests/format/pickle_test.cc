#include "lockstep/format/pickle.h"

#include <gtest/gtest.h>

#include <string>

#include "format/pt_builder.h"
#include "lockstep/core/file.h"
#include "lockstep/format/zip.h"

namespace lockstep {
namespace {

using testing::PGlobal;
using testing::PInt;
using testing::PStr;
using Kind = PickleObject::Kind;
using namespace std::string_literals;  // "\x00"s keeps its NUL bytes

const std::string kPtDir = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/pt/";

// data.pkl of a .pt file in tests/data/pt.
std::string DataPkl(const std::string& stem) {
  auto bytes = ReadFileToString(kPtDir + stem + ".pt");
  EXPECT_TRUE(bytes.ok());
  auto zip = ZipReader::Open(*bytes, stem);
  EXPECT_TRUE(zip.ok());
  std::string scratch;
  return std::string(
      zip->Data(*zip->Find(stem + "/data.pkl"), &scratch).value());
}

std::string ReprOf(const std::string& pickle) {
  auto u = Unpickle(pickle, "p");
  if (!u.ok()) return u.status().ToString();
  return u->root().Repr();
}

void ExpectError(const std::string& pickle, StatusCode code,
                 const std::string& part, const UnpickleLimits& limits = {}) {
  auto u = Unpickle(pickle, "x.pt: zip entry 'x/data.pkl'", limits);
  ASSERT_FALSE(u.ok()) << u->root().Repr();
  EXPECT_EQ(u.status().code(), code) << u.status().ToString();
  EXPECT_NE(u.status().message().find(part), std::string::npos)
      << u.status().ToString();
  EXPECT_EQ(u.status().message().rfind("x.pt: zip entry 'x/data.pkl': ", 0),
            0u);
}

TEST(UnpickleTest, TorchProtocol2TensorPickle) {
  EXPECT_EQ(ReprOf(DataPkl("requires_grad")),
            "torch._utils._rebuild_tensor_v2(persistent_id(('storage', "
            "torch.FloatStorage, '0', 'cpu', 20)), 0, (5, 4), (4, 1), True, "
            "OrderedDict())");
}

TEST(UnpickleTest, TorchProtocol4UsesFramesMemoizeAndStackGlobal) {
  EXPECT_EQ(ReprOf(DataPkl("proto4")),
            "torch._utils._rebuild_tensor_v2(persistent_id(('storage', "
            "torch.IntStorage, '0', 'cpu', 7)), 0, (7,), (1,), False, "
            "OrderedDict())");
}

TEST(UnpickleTest, ParameterWrapsTheTensorAndSharesTheMemo) {
  auto u = Unpickle(DataPkl("parameter"), "p");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  const PickleObject& root = u->root();
  ASSERT_TRUE(root.IsCallOf("torch._utils", "_rebuild_parameter"));
  ASSERT_EQ(root.args().size(), 3u);
  EXPECT_TRUE(root.args()[0]->IsCallOf("torch._utils", "_rebuild_tensor_v2"));
  // BINGET 9 gives the very global object that BINPUT 9 stored.
  ASSERT_NE(root.args()[2]->type, nullptr);
  EXPECT_EQ(root.args()[2]->type, root.args()[0]->args()[5]->type);
}

TEST(UnpickleTest, Integers) {
  std::string p = "\x80\x02(" + PInt(0) + PInt(255) + PInt(65535) + PInt(-1) +
                  PInt(INT32_MIN) + PInt(INT64_MAX) + PInt(INT64_MIN) +
                  "\x8a\x00"s + "\x8a\x01\xff" + "\x8a\x02\x00\x80"s +
                  "\x8b\x01\x00\x00\x00\x7f"s + "t.";
  EXPECT_EQ(ReprOf(p),
            "(0, 255, 65535, -1, -2147483648, 9223372036854775807, "
            "-9223372036854775808, 0, -1, -32768, 127)");
}

TEST(UnpickleTest, ScalarsAndStrings) {
  std::string p = "(N\x88\x89"s + "G\x3f\xf8\0\0\0\0\0\0"s + PStr("a'b") +
                  "\x8c\x02hi" + "C\x02\x00\xff"s + "B\x01\x00\x00\x00z"s +
                  "t.";
  EXPECT_EQ(ReprOf(p),
            "(None, True, False, 1.5, \"a'b\", 'hi', b'\\x00\\xff', b'z')");
}

TEST(UnpickleTest, ContainersAndMemoAliasing) {
  // l = []; memo[0] = l; l.append(1); l.extend([2, 3]); d = {'k': l}
  // -> (d, l) where both refer to the same list.
  std::string p = "]q\x00"s + PInt(1) + "a(" + PInt(2) + PInt(3) + "e}" +
                  PStr("k") + "h\x00s"s + "(" + PStr("x") + PInt(9) + "u" +
                  "h\x00\x86."s;
  EXPECT_EQ(ReprOf(p), "({'k': [1, 2, 3], 'x': 9}, [1, 2, 3])");
  auto u = Unpickle(p, "p");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->root().items[0]->items[1], u->root().items[1]);
}

TEST(UnpickleTest, MarkBasedListDictAndStackOps) {
  std::string p = "(" + PInt(1) + PInt(2) + "l(" + PStr("a") + PInt(3) + "d" +
                  PInt(7) + "0" + "2" + "(" + PInt(8) + "1" + "\x87.";
  EXPECT_EQ(ReprOf(p), "([1, 2], {'a': 3}, {'a': 3})");
}

TEST(UnpickleTest, LongBinPutGetAndMemoize) {
  std::string p = PInt(5) + "r\x10\x00\x00\x00"s + "\x94" + "0" + PInt(6) +
                  "\x94" + "j\x10\x00\x00\x00"s + "h\x02" + "\x87.";
  EXPECT_EQ(ReprOf(p), "(6, 5, 6)");
}

TEST(UnpickleTest, BuildSetsStateOfACall) {
  std::string p = PGlobal("m", "C") + ")R" + PStr("state") + "b.";
  auto u = Unpickle(p, "p");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  ASSERT_NE(u->root().state, nullptr);
  EXPECT_EQ(u->root().Repr(), "m.C().__setstate__('state')");
  EXPECT_EQ(u->root().Describe(), "call of m.C");
}

TEST(UnpickleTest, TrailingBytesAfterStopAreIgnored) {
  EXPECT_EQ(ReprOf("N.garbage"), "None");
}

TEST(UnpickleTest, CyclesAndDeepNestingAreSafe) {
  // l = []; l.append(l)
  auto u = Unpickle("]q\x00h\x00"s + "a.", "p");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->root().items[0], &u->root());
  EXPECT_NE(u->root().Repr(5).find("..."), std::string::npos);
  // 100000 nested 1-tuples: built by a loop, printed to a bounded depth.
  std::string deep = "N" + std::string(100000, '\x85') + ".";
  u = Unpickle(deep, "p");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->root().Repr(3), "(((...,),),)");
  EXPECT_EQ(u->object_count(), 100001u);
}

TEST(UnpickleTest, MalformedInputGivesPositionAndOpcode) {
  ExpectError("", StatusCode::kCorruption, "byte 0: pickle ends without STOP");
  ExpectError("\x80\x02N", StatusCode::kCorruption, "byte 3: pickle ends");
  ExpectError("X\x05\x00\x00\x00"s + "ab.", StatusCode::kCorruption,
              "byte 0: BINUNICODE: truncated: needs 5 bytes, 3 left");
  ExpectError("\xff", StatusCode::kCorruption,
              "byte 0: not a pickle opcode: 0xff");
  ExpectError("\x8f.", StatusCode::kCorruption,
              "byte 0: unsupported pickle opcode EMPTY_SET 0x8f");
  ExpectError("NQ\x86.", StatusCode::kCorruption,
              "byte 2: TUPLE2: needs 2 items, stack has 1");
  ExpectError(".", StatusCode::kCorruption, "byte 0: STOP: stack is empty");
  ExpectError("Nt.", StatusCode::kCorruption, "TUPLE: no MARK on the stack");
  ExpectError("(.", StatusCode::kCorruption, "STOP: stack is empty");
  ExpectError("h\x03.", StatusCode::kCorruption,
              "BINGET: memo key 3 is not set");
  ExpectError("q\x00."s, StatusCode::kCorruption, "BINPUT: stack is empty");
  ExpectError(
      PInt(1) + PInt(2) + "\x93.", StatusCode::kCorruption,
      "STACK_GLOBAL: module and name must be str, found int 1 and int 2");
  ExpectError("cmod\nna", StatusCode::kCorruption, "GLOBAL: truncated");
  ExpectError(PGlobal("m", "f") + PInt(1) + "R.", StatusCode::kCorruption,
              "REDUCE: arguments must be a tuple, found int 1");
  ExpectError("}(Nu.", StatusCode::kCorruption, "SETITEMS: odd number");
  ExpectError("N(Ne.", StatusCode::kCorruption,
              "APPENDS: expected a list on the stack, found None");
  ExpectError("\x95\xff\x00\x00\x00\x00\x00\x00\x00N."s,
              StatusCode::kCorruption, "FRAME: frame of 255 bytes");
  ExpectError("\x8b\xff\xff\xff\xff.", StatusCode::kCorruption,
              "LONG4: negative byte count -1");
  ExpectError("}Nb.", StatusCode::kNotSupported, "BUILD: setting the state");
}

// torch's state_dict is an OrderedDict with a `_metadata` attribute, which
// the pickle restores with BUILD on the dict (a plain dict has no such
// state: "}Nb." above stays an error).
TEST(UnpickleTest, BuildSetsTheStateOfAnOrderedDict) {
  auto u = Unpickle(
      PGlobal("collections", "OrderedDict") + ")R}X\x01\x00\x00\x00kNsb."s,
      "p");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  ASSERT_EQ(u->root().kind, PickleObject::Kind::kDict);
  ASSERT_NE(u->root().state, nullptr);
  EXPECT_EQ(u->root().state->Repr(), "{'k': None}");
}

TEST(UnpickleTest, UnsupportedValues) {
  ExpectError("\x80\x06N.", StatusCode::kNotSupported, "PROTO: protocol 6");
  ExpectError("\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01."s,
              StatusCode::kNotSupported, "LONG1: integer of 9 bytes");
}

TEST(UnpickleTest, LimitsAreEnforced) {
  UnpickleLimits small;
  small.max_stack = 3;
  small.max_marks = 2;
  small.max_memo = 1;
  small.max_objects = 5;
  ExpectError("NNNN.", StatusCode::kNotSupported, "stack deeper than 3", small);
  ExpectError("(((N.", StatusCode::kNotSupported, "more than 2 nested", small);
  ExpectError("Nq\x00q\x01."s, StatusCode::kNotSupported, "more than 1 memo",
              small);
  ExpectError("N0N0N0N0N0N0N.", StatusCode::kNotSupported,
              "more than 5 objects", small);
  // Re-putting an existing key does not count against the memo limit.
  EXPECT_TRUE(Unpickle("Nq\x00q\x00."s, "p", small).ok());
}

TEST(UnpickleTest, KindNames) {
  EXPECT_EQ(PickleKindName(Kind::kPersistentId), "persistent id");
  EXPECT_EQ(PickleKindName(Kind::kDict), "dict");
}

}  // namespace
}  // namespace lockstep
