// A minimal protocol-buffer wire-format reader and writer, enough for
// TensorBoard's Event/Summary/TensorProto messages. Private to src/curve.
// Thread safety: ProtoReader is a cursor over caller-owned bytes; the
// Append functions are pure.
#ifndef LOCKSTEP_SRC_CURVE_PROTOBUF_H_
#define LOCKSTEP_SRC_CURVE_PROTOBUF_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::curve_internal {

enum WireType : int { kVarint = 0, kI64 = 1, kLen = 2, kI32 = 5 };

// Walks the fields of one message. Usage:
//   ProtoReader r(bytes);
//   while (r.Next()) { switch (r.field()) ... }
//   if (!r.ok()) -> malformed
// Groups (wire types 3, 4) and bad varints/lengths end the walk as errors.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}

  // Moves to the next field; false at the end or on an error.
  bool Next();
  bool ok() const { return ok_; }

  uint32_t field() const { return field_; }
  int wire() const { return wire_; }
  // The value of a kVarint field, or the bits of a kI64/kI32 one.
  uint64_t number() const { return number_; }
  // The bytes of a kLen field.
  std::string_view bytes() const { return bytes_; }

 private:
  bool ReadVarint(uint64_t* v);
  bool Fail() { return ok_ = false; }

  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
  uint32_t field_ = 0;
  int wire_ = 0;
  uint64_t number_ = 0;
  std::string_view bytes_;
};

// Reads a varint from `*s`, advancing it. False when it is cut short or
// longer than 10 bytes.
bool ReadVarint(std::string_view* s, uint64_t* v);

float FloatFromBits(uint32_t bits);
double DoubleFromBits(uint64_t bits);

void AppendVarint(std::string* out, uint64_t v);
void AppendTag(std::string* out, uint32_t field, WireType wire);
void AppendLenField(std::string* out, uint32_t field, std::string_view bytes);
void AppendFixed32(std::string* out, uint32_t field, uint32_t bits);
void AppendFixed64(std::string* out, uint32_t field, uint64_t bits);
uint32_t FloatBits(float f);
uint64_t DoubleBits(double d);

}  // namespace lockstep::curve_internal

#endif  // LOCKSTEP_SRC_CURVE_PROTOBUF_H_
