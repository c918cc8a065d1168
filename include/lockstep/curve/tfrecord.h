// TFRecord framing, as TensorBoard event files use it. Each record is
//
//   uint64 length                      (little endian)
//   uint32 masked_crc32c(length bytes)
//   byte   data[length]
//   uint32 masked_crc32c(data)
//
// where masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 and crc32c
// is CRC-32C (Castagnoli, reflected polynomial 0x82f63b78).
// Thread safety: pure functions.
#ifndef LOCKSTEP_CURVE_TFRECORD_H_
#define LOCKSTEP_CURVE_TFRECORD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/format/crc32.h"  // Crc32c

namespace lockstep {

inline constexpr size_t kTfRecordHeaderBytes = 12;  // length + its CRC
inline constexpr size_t kTfRecordFooterBytes = 4;   // CRC of the data

// TFRecord's masking of a CRC (so that CRCs of CRCs are not trivial).
inline uint32_t MaskCrc32c(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

// `payload` framed as one TFRecord.
std::string EncodeTfRecord(std::string_view payload);

// Where one record lies in a buffer, or why there is none.
enum class TfRecordResult {
  kOk,         // *payload is the record's data
  kEnd,        // offset == data.size(): no more records
  kTruncated,  // the record runs past the end of the buffer
  kBadLengthCrc,
  kBadDataCrc,  // *payload is set (the length was good), *next too
};

// Reads the record at `offset` of `data`. On kOk and kBadDataCrc sets
// `*payload` and `*next` (the offset after the record).
TfRecordResult ReadTfRecord(std::string_view data, size_t offset,
                            std::string_view* payload, size_t* next);

}  // namespace lockstep

#endif  // LOCKSTEP_CURVE_TFRECORD_H_
