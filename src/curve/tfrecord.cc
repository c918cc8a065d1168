#include "lockstep/curve/tfrecord.h"

namespace lockstep {
namespace {

uint64_t LoadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

uint32_t Load32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void AppendLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out->push_back(static_cast<char>(v >> (8 * i)));
}

}  // namespace

std::string EncodeTfRecord(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + kTfRecordHeaderBytes + kTfRecordFooterBytes);
  AppendLe(&out, payload.size(), 8);
  AppendLe(&out, MaskCrc32c(Crc32c(out)), 4);
  out.append(payload);
  AppendLe(&out, MaskCrc32c(Crc32c(payload)), 4);
  return out;
}

TfRecordResult ReadTfRecord(std::string_view data, size_t offset,
                            std::string_view* payload, size_t* next) {
  if (offset >= data.size()) return TfRecordResult::kEnd;
  size_t left = data.size() - offset;
  if (left < kTfRecordHeaderBytes) return TfRecordResult::kTruncated;
  const char* p = data.data() + offset;
  if (MaskCrc32c(Crc32c(std::string_view(p, 8))) != Load32(p + 8)) {
    return TfRecordResult::kBadLengthCrc;
  }
  uint64_t len = LoadLe64(p);
  if (len > left - kTfRecordHeaderBytes ||
      left - kTfRecordHeaderBytes - len < kTfRecordFooterBytes) {
    return TfRecordResult::kTruncated;
  }
  *payload = std::string_view(p + kTfRecordHeaderBytes, len);
  *next = offset + kTfRecordHeaderBytes + len + kTfRecordFooterBytes;
  uint32_t stored = Load32(p + kTfRecordHeaderBytes + len);
  return MaskCrc32c(Crc32c(*payload)) == stored ? TfRecordResult::kOk
                                                : TfRecordResult::kBadDataCrc;
}

}  // namespace lockstep
