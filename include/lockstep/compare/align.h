// lockstep's --align mode: a sequence alignment of the two op streams that
// survives operators inserted in or missing from one side (e.g. a function
// compiled by torch.jit.script that one device dumps and the other does not).
//
// Each entry is reduced to a signature: its name without the call index
// (call indices shift after an inserted op), plus the io state and shape of
// each of its rows. The two signature sequences are aligned with Myers'
// O((N+M)·D) shortest-edit-script algorithm (D = number of inserted plus
// missing entries); entries on the script's diagonal are matched and their
// rows paired by their io suffix (with msprobe's dtype gate). When D exceeds
// kMaxAlignEdits the alignment falls back to msprobe's exact matching for the
// remainder and says so in a gap-free warning.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_ALIGN_H_
#define LOCKSTEP_COMPARE_ALIGN_H_

#include <optional>
#include <string>
#include <vector>

#include "lockstep/compare/op_rows.h"
#include "lockstep/compare/result.h"

namespace lockstep {

inline constexpr int kMaxAlignEdits = 4000;

// For each target row, the matched baseline row or -1. Entries present on
// one side only are appended to `gaps` (with `rank` and `step`), in stream
// order; a missing entry's target_position is the target entry it precedes.
// Returns nullopt (and appends nothing) when the streams need more than
// kMaxAlignEdits edits: the caller matches by name instead.
std::optional<std::vector<int>> AlignRows(const std::vector<OpRow>& target,
                                          const std::vector<OpRow>& baseline,
                                          int rank, int step,
                                          std::vector<AlignmentGap>* gaps);

// Myers' diff over two sequences of keys: returns pairs (i, j) of equal
// elements on one shortest edit script, in order. Returns false (and leaves
// `pairs` empty) when more than `max_edits` edits are needed.
bool AlignSequences(const std::vector<std::string>& a,
                    const std::vector<std::string>& b, int max_edits,
                    std::vector<std::pair<size_t, size_t>>* pairs);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_ALIGN_H_
