// One process's share of a compare's (step, rank) pairs, as it compared
// them (compare_share.h), and the byte format in which that share travels
// to the process that writes the reports.
//
// Format (all integers little-endian; strings are a u32 length and bytes):
//
//   magic     8 bytes  "LSPART01"
//   length    u64      bytes of the body
//   body      header fields, then the pairs, rows, warnings and gaps
//             (partial_result.cc writes them field by field, in the order
//             the structs below declare them; doubles as their 64 bits, so
//             NaN payloads, -0 and infinities travel exactly)
//   crc       u32      CRC-32 of the body
//
// A statistics row is about 330 bytes encoded (its ~30 cells as text, the
// verdict, 15 doubles); docs/compare.md "On a cluster (MPI)" has the sizes
// measured.
// Thread safety: plain values and pure functions.
#ifndef LOCKSTEP_COMPARE_PARTIAL_RESULT_H_
#define LOCKSTEP_COMPARE_PARTIAL_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"
#include "lockstep/format/module_parents.h"

namespace lockstep {

// What comparing one (step, rank) pair gave.
struct PairOutcome {
  enum class Kind : uint8_t {
    kCompared,    // rows made
    kUnreadable,  // a dump.json could not be read: skipped with a warning
    kFailed       // an error that ends the whole compare
  };
  size_t pair = 0;  // index into the pairing's pairs
  Kind kind = Kind::kCompared;
  Status status;  // kUnreadable, kFailed: why
  // kCompared: how many rows, warnings and gaps of the partial's vectors are
  // this pair's (the pairs' shares follow one another in pair order).
  size_t rows = 0, warnings = 0, gaps = 0;
  // Index among this pair's warnings of the one on unreadable collective
  // calls (-1: none): only the first few ranks' are kept, counted over all
  // pairs when the shares are assembled.
  int32_t collective_warning = -1;
  RankCollectives collectives;
  // The pair's construct.json (parent and modules only; its problems are
  // already warnings), for the module tree.
  std::optional<ModuleParents> parents;
  std::optional<RankStackFile> stack_file;
};

struct PartialResult {
  // The pair whose dumps chose the mode and the columns (the share's first
  // pair that was read); -1 when none was. When that pair's outcome is
  // kFailed, the mode could not be chosen (its status says why).
  int64_t header_pair = -1;
  // The mode and columns were given (not chosen by header_pair).
  bool header_given = false;
  CompareMode mode = CompareMode::kStatistics;
  bool with_stack = false;         // the columns have NPU_Stack_Info
  std::vector<PairOutcome> pairs;  // in pair order
  std::vector<CompareRow> rows;
  std::vector<std::string> warnings;
  std::vector<AlignmentGap> gaps;
};

// The bytes of `p` (the format above).
std::string EncodePartial(const PartialResult& p);

// Reads what EncodePartial wrote. Errors: Corruption naming `what` (e.g.
// "partial result of process 3") and the byte offset, for a bad magic, a
// length that disagrees with the bytes, a CRC mismatch, a truncated field or
// a value out of range. Never reads out of bounds.
StatusOr<PartialResult> DecodePartial(std::string_view bytes,
                                      std::string_view what);

// A Status as bytes (code and message) and back, for errors that one
// process meets and another reports. DecodeStatus of bytes not written by
// EncodeStatus gives Corruption.
std::string EncodeStatus(const Status& s);
Status DecodeStatus(std::string_view bytes);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_PARTIAL_RESULT_H_
