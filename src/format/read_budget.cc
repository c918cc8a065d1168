// ReadBudget: charging what a reader makes from one file.
#include "lockstep/format/read_budget.h"

#include <cstdio>
#include <utility>

namespace lockstep {
namespace {

// Adds `n` to `total` unless the sum would pass `limit`.
bool TryAdd(std::atomic<uint64_t>* total, uint64_t n, uint64_t limit) {
  uint64_t have = total->load(std::memory_order_relaxed);
  do {
    if (n > limit || have > limit - n) return false;
  } while (
      !total->compare_exchange_weak(have, have + n, std::memory_order_relaxed));
  return true;
}

}  // namespace

uint64_t ReadLimits::ExpandedFor(uint64_t file_bytes) const {
  uint64_t per = expanded_per_file_byte;
  uint64_t scaled =
      per != 0 && file_bytes > UINT64_MAX / per ? UINT64_MAX : file_bytes * per;
  return scaled > UINT64_MAX - expanded_base ? UINT64_MAX
                                             : scaled + expanded_base;
}

std::string ByteSize(uint64_t n) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB",
                                       "TiB", "PiB", "EiB"};
  if (n < 1024) return std::to_string(n) + (n == 1 ? " byte" : " bytes");
  double v = static_cast<double>(n);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), v < 10 ? "%.1f %s" : "%.0f %s", v, kUnits[u]);
  return buf;
}

ReadBudget::ReadBudget(const ReadLimits& limits, std::string subject,
                       uint64_t file_bytes)
    : limits_(limits),
      subject_(std::move(subject)),
      byte_limit_(limits.ExpandedFor(file_bytes)) {}

Status ReadBudget::ChargeBytes(uint64_t n, std::string_view what) {
  if (TryAdd(&bytes_, n, byte_limit_)) return Status::Ok();
  return Status::NotSupported(
      subject_, Abbreviate(what) + " needs " + ByteSize(n) +
                    " more, past the " + ByteSize(byte_limit_) +
                    " that reading this file may make (" + ByteSize(bytes()) +
                    " made). Note: a file that expands this much is refused "
                    "as untrusted input (ReadLimits, format/read_budget.h)");
}

}  // namespace lockstep
