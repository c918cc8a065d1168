// The origin of a divergence across ranks: the rank that diverged on its
// own, and the collectives through which the divergence reached the others.
// (With data parallelism every rank differs from the first all_reduce on;
// the first divergence of the lowest rank is then that all_reduce, not the
// operator that changed.)
//
// The algorithm, deterministic (ties go to the lowest rank):
//  1. Link the ranks' collective calls into operations and order them by
//     (step, layer) (collective_links.h). An entry between a rank's calls
//     has the layer of the call before it, 0 before its first call.
//  2. Walk each rank alone (FindRankDivergences, first_divergence.h), the
//     receive buffers of its collectives not read as inputs. A rank's first
//     divergence is
//       - a candidate when it is a compute entry, an entry on one side only,
//         or an input of a collective (changed data sent, or a changed
//         argument such as the reduce op);
//       - a receipt when it is a collective's output that its own inputs do
//         not explain: the data came from another rank.
//  3. The origin is the candidate with the smallest (step, layer, rank), so
//     a divergence before a rank's first collective wins over any after one.
//     The other candidates diverged on their own too (the same change on
//     every rank, or one the links do not explain): `others`.
//  4. Without a candidate (drift that no single entry explains), the
//     earliest operation where some member's data input differs names that
//     member's earliest failing entry since its previous collective (or the
//     input itself), as drift; where only outputs differ, from equal inputs,
//     the operation itself on its lowest such member (the collective
//     computes differently).
//  5. The path: operations in (step, layer) order carry the divergence from
//     members that diverged before them (a candidate at or before the call,
//     or a rank reached at an earlier operation) to members whose output of
//     it differs, along its flow: all to all (all_reduce, all_gather,
//     reduce_scatter, all_to_all), root to the others (broadcast, scatter),
//     the others to the root (reduce, gather), sender to receiver; a barrier
//     carries nothing. Each rank reached is a hop (rank, step, its call,
//     from: the lowest diverged sender, one whose data input differs when
//     there is one). The origin's path is the hops that descend from it.
// "Differs": an error above the row's rounding floor, or an unmatched row,
// or (no error known) a verdict other than pass.
// Thread safety: pure function.
#ifndef LOCKSTEP_COMPARE_RANK_ORIGIN_H_
#define LOCKSTEP_COMPARE_RANK_ORIGIN_H_

#include <string>
#include <vector>

#include "lockstep/compare/result.h"

namespace lockstep {

// `rows` as CompareRankPair appends them (contiguous per (step, rank)),
// `collectives` one per compared (step, rank) (calls may be empty). Not
// analyzed (analyzed false) when no step has two ranks. Warnings (calls that
// do not line up) are appended to `warnings`. `*divergence` is set to the
// origin as a first divergence; without an origin, to FindFirstDivergence's
// with the collectives' receive buffers ignored (the earliest failing row as
// drift, or none); not analyzed: found false.
RankOrigin FindRankOrigin(const std::vector<CompareRow>& rows,
                          const std::vector<AlignmentGap>& gaps,
                          const std::vector<RankCollectives>& collectives,
                          std::vector<std::string>* warnings,
                          FirstDivergence* divergence);

// "0..4, 6, 9..511" for ranks in any order (duplicates dropped).
std::string RankRanges(std::vector<int> ranks);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_RANK_ORIGIN_H_
