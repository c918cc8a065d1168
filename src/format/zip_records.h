// The ZIP records' signatures and fixed sizes (APPNOTE 4.3), shared by the
// reader (zip.cc) and the torch.save writer (zip_writer.cc).
#ifndef LOCKSTEP_SRC_FORMAT_ZIP_RECORDS_H_
#define LOCKSTEP_SRC_FORMAT_ZIP_RECORDS_H_

#include <cstddef>
#include <cstdint>

namespace lockstep::internal::zip {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEocdSig = 0x06054b50;
constexpr uint32_t kZip64EocdSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr size_t kLocalSize = 30;
constexpr size_t kCentralSize = 46;
constexpr size_t kEocdSize = 22;
constexpr size_t kZip64EocdSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kMax32 = 0xFFFFFFFF;  // "see the ZIP64 field"
constexpr uint16_t kMax16 = 0xFFFF;

}  // namespace lockstep::internal::zip

#endif  // LOCKSTEP_SRC_FORMAT_ZIP_RECORDS_H_
