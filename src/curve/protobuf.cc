#include "curve/protobuf.h"

#include <cstring>

namespace lockstep::curve_internal {

bool ReadVarint(std::string_view* s, uint64_t* v) {
  *v = 0;
  for (int i = 0; i < 10; ++i) {
    if (static_cast<size_t>(i) >= s->size()) return false;
    uint8_t b = static_cast<uint8_t>((*s)[i]);
    *v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      s->remove_prefix(i + 1);
      return true;
    }
  }
  return false;
}

bool ProtoReader::ReadVarint(uint64_t* v) {
  std::string_view rest = data_.substr(pos_);
  if (!curve_internal::ReadVarint(&rest, v)) return false;
  pos_ = data_.size() - rest.size();
  return true;
}

bool ProtoReader::Next() {
  if (!ok_ || pos_ >= data_.size()) return false;
  uint64_t key;
  if (!ReadVarint(&key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) {
    return Fail();
  }
  field_ = static_cast<uint32_t>(key >> 3);
  wire_ = static_cast<int>(key & 7);
  size_t left = data_.size() - pos_;
  switch (wire_) {
    case kVarint:
      return ReadVarint(&number_) || Fail();
    case kI64:
    case kI32: {
      size_t n = wire_ == kI64 ? 8 : 4;
      if (left < n) return Fail();
      number_ = 0;
      for (size_t i = n; i-- > 0;) {
        number_ = (number_ << 8) | static_cast<uint8_t>(data_[pos_ + i]);
      }
      pos_ += n;
      return true;
    }
    case kLen: {
      uint64_t len;
      if (!ReadVarint(&len) || len > data_.size() - pos_) return Fail();
      bytes_ = data_.substr(pos_, len);
      pos_ += len;
      return true;
    }
    default:
      return Fail();
  }
}

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double DoubleFromBits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

uint32_t FloatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

uint64_t DoubleBits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void AppendTag(std::string* out, uint32_t field, WireType wire) {
  AppendVarint(out, (static_cast<uint64_t>(field) << 3) | wire);
}

void AppendLenField(std::string* out, uint32_t field, std::string_view bytes) {
  AppendTag(out, field, kLen);
  AppendVarint(out, bytes.size());
  out->append(bytes);
}

void AppendFixed32(std::string* out, uint32_t field, uint32_t bits) {
  AppendTag(out, field, kI32);
  for (int i = 0; i < 4; ++i)
    out->push_back(static_cast<char>(bits >> (8 * i)));
}

void AppendFixed64(std::string* out, uint32_t field, uint64_t bits) {
  AppendTag(out, field, kI64);
  for (int i = 0; i < 8; ++i)
    out->push_back(static_cast<char>(bits >> (8 * i)));
}

}  // namespace lockstep::curve_internal
