// What reading one untrusted file may cost: a per-file budget of bytes made
// from it, objects and string bytes (docs/architecture.md, "Adding a
// reader").
//
// A dump, a checkpoint or a log may come from someone else, and small files
// can describe large things: memo references that repeat one string, views
// with a stride of 0, deflate streams that inflate a thousandfold, a JSON
// string of a gigabyte. Readers charge what they make to a ReadBudget before
// they allocate it, so a hostile file ends in an error Status, never in an
// allocation sized by the input (and never in std::bad_alloc).
//
//   ReadBudget budget(ReadLimits{}, "x.pt", file_size);
//   LOCKSTEP_RETURN_IF_ERROR(budget.ChargeBytes(n, "'model.w' (a copy)"));
//
// Thread safety: a ReadBudget may be charged from many threads.
#ifndef LOCKSTEP_FORMAT_READ_BUDGET_H_
#define LOCKSTEP_FORMAT_READ_BUDGET_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/core/status.h"

namespace lockstep {

struct ReadLimits {
  // Bytes that reading a file may make beyond the file's own bytes (which
  // are mapped, not copied): inflated ZIP entries, gathered copies of
  // strided views, strings copied for every reference to them. The budget is
  // expanded_base + expanded_per_file_byte * the file's size: a copy of
  // everything a file holds always fits, a thousandfold expansion never.
  uint64_t expanded_base = uint64_t{256} << 20;
  uint64_t expanded_per_file_byte = 2;
  // Values made from one JSON file (json_reader.h checks them as it goes).
  uint64_t objects = uint64_t{1} << 26;
  // Bytes of one JSON string, key or number (json_reader.h). A pickled
  // str is bounded by data.pkl's own limit (64 MiB) instead: its copies are
  // expanded bytes.
  uint64_t string_bytes = uint64_t{16} << 20;

  // The expanded-bytes budget of a file of `file_bytes` (saturating).
  uint64_t ExpandedFor(uint64_t file_bytes) const;
};

// Tallies the bytes one file's reading has made against its ReadLimits.
class ReadBudget {
 public:
  // `subject` names the file in messages.
  ReadBudget(const ReadLimits& limits, std::string subject,
             uint64_t file_bytes);
  ReadBudget(const ReadBudget&) = delete;
  ReadBudget& operator=(const ReadBudget&) = delete;

  // Adds `n` bytes made from the file. NotSupported (nothing added) when the
  // total would pass the budget; `what` names what was being made, e.g.
  // "'model.w': a copy of view of shape [4, 4]", and is abbreviated.
  Status ChargeBytes(uint64_t n, std::string_view what);
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  uint64_t byte_limit() const { return byte_limit_; }
  const ReadLimits& limits() const { return limits_; }

 private:
  ReadLimits limits_;
  std::string subject_;
  uint64_t byte_limit_;
  std::atomic<uint64_t> bytes_{0};
};

// "1.5 GiB", "300 MiB", "12 KiB", "17 bytes": a size for messages.
std::string ByteSize(uint64_t n);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_READ_BUDGET_H_
