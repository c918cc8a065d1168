// Overflow analysis of one dump: entries whose tensors hold inf/nan, or
// values saturated at the fp16/bf16 maximum (NPU saturation mode turns inf
// into ±65504, so an overflow shows as a value at the maximum rather than as
// inf). Works from the statistics in dump.json (Max/Min of each tensor); for
// tensor dumps a caller may refine with the tensors themselves.
//
// An entry is an overflow *origin* when its inputs are clean and its outputs
// are not (msprobe's "anomaly" rule): the first origin is where to look.
// An entry whose outputs are clean is not listed (its inputs' infinities
// end there), nor one whose outputs' infinities a number argument explains
// (masked_fill(x, mask, -inf)); a NaN always is.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_OVERFLOW_H_
#define LOCKSTEP_COMPARE_OVERFLOW_H_

#include <string>
#include <vector>

#include "lockstep/compare/op_rows.h"
#include "lockstep/format/dump.h"
#include "lockstep/numerics/half.h"

namespace lockstep {

enum class OverflowKind { kNone, kNan, kInf, kSaturated };
const char* OverflowKindName(OverflowKind k);  // "nan", "inf", "saturated"

// The overflow kind of one row from its Max/Min (nan beats inf beats
// saturated). Saturated: |Max| or |Min| equals the maximum of the row's
// dtype (fp16: 65504, bf16: 3.3895e38) or, for fp32 tensors, 65504 exactly.
OverflowKind RowOverflow(const OpRow& row);

struct OverflowEntry {
  std::string entry;
  size_t entry_index = 0;
  bool origin = false;                      // inputs clean, outputs overflow
  OverflowKind kind = OverflowKind::kNone;  // worst over the entry's rows
  std::vector<size_t> bad_rows;             // indices into OverflowReport::rows
  std::vector<size_t> inputs;               // the entry's input rows (indices)
};

struct OverflowReport {
  std::vector<OpRow> rows;             // all rows of the dump (owned)
  std::vector<OverflowEntry> entries;  // entries with any overflow, in order
  // Index into `entries` of the first origin, or -1 when none.
  int first_origin = -1;
};

// Analyses a dump. REQUIRES: nothing; a dump without statistics (structure
// task) yields no entries.
OverflowReport AnalyzeOverflow(const DumpFile& dump);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_OVERFLOW_H_
