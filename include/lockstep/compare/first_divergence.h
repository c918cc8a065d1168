// The first divergent operator: where the target run starts to differ from
// the baseline by more than what came before it explains.
//
// Entries are walked in execution order per rank, step by step, carrying
// what was seen. An entry is the culprit when, first of all:
//  - it is on one side only (inserted in the target, or missing from it,
//    where the op streams were aligned); except an inserted call whose
//    every tensor output has exactly the statistics of one of its inputs
//    (`x * 1.0`): it changes no number, and is listed in the detail of
//    what is named after it;
//  - a non-tensor argument differs (gelu's `approximate`, an eps, a dropout
//    p), unless an earlier dumped output returned that value on both sides;
//  - an output's dtype differs while every input's is the same on both
//    sides (a linear under autocast, a softmax in bfloat16): named whatever
//    the statistics show, which for a bfloat16 tensor are recorded in
//    bfloat16 and round the change away;
//  - a tensor input differs beyond its rounding floor and
//      * an earlier output was that tensor in the baseline but not in the
//        target (matched by max/min/mean/norm): it changed between the two
//        ops (a gradient hook, an op outside the dump, an in-place change);
//      * or no earlier output was it and its error is more than
//        kInputJump times anything seen before: a parameter or input data
//        that differs (before the first step: an initialisation or a
//        checkpoint). Where every error before it was exactly 0 (runs
//        identical up to here), any difference counts, below the floor
//        too: in tensor mode any element, in statistics mode a max or min,
//        or a mean or norm beyond 1e-6 relative (what summing in another
//        order may give);
//  - its output error is more than its inputs' error explains:
//      out > kAmplification * in + floor   (floor: RoundingFloor of the
//    output's dtypes), where `in` for a backward entry includes its forward
//    entry's error (the saved tensors), and for an entry without inputs (a
//    factory op, a parameter-gradient entry) is the largest error seen. In
//    statistics mode, where `in` > 0, `out` is read from the output's mean
//    and norm alone (CompareRow::aggregate_error): its max and min are one
//    element each, moved by the inputs' largest elementwise difference,
//    which their statistics do not show (Adam's update of a parameter
//    element with a near-zero gradient, say).
// Ties across ranks go to the earliest step, then the lowest rank. When no
// entry qualifies and some row does not pass, the earliest such row is
// reported with that said in `detail`.
// Thread safety: pure function.
#ifndef LOCKSTEP_COMPARE_FIRST_DIVERGENCE_H_
#define LOCKSTEP_COMPARE_FIRST_DIVERGENCE_H_

#include <vector>

#include "lockstep/compare/result.h"

namespace lockstep {

// How much an op may amplify its inputs' relative error (a residual add, a
// softmax of logits of magnitude ~4, a layer norm) before it is the cause.
inline constexpr double kAmplification = 4;
// How far an input's error may exceed every error seen before it when no
// dumped operator produced it.
inline constexpr double kInputJump = 4;

// `rows` in target order per (step, rank) as CompareRankPair appends them;
// `gaps` as the alignment found them. Rows i with (*ignored_inputs)[i] are
// neither read as inputs nor named as the earliest failing row (a
// collective's receive buffers, whose contents before the call say
// nothing); null: none.
FirstDivergence FindFirstDivergence(
    const std::vector<CompareRow>& rows, const std::vector<AlignmentGap>& gaps,
    const std::vector<bool>* ignored_inputs = nullptr);

// Each rank's own first divergence (the walk above, over all its steps), in
// rank order; ranks where no entry qualifies are left out (no drift rows).
// `ignored_inputs` as above.
std::vector<FirstDivergence> FindRankDivergences(
    const std::vector<CompareRow>& rows, const std::vector<AlignmentGap>& gaps,
    const std::vector<bool>* ignored_inputs);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_FIRST_DIVERGENCE_H_
