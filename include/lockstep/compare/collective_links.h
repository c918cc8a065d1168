// Which collective calls of different ranks are one operation, and the
// order the operations happened in.
//
// Within a step, the k-th call of an API on a group (its `group` key) on
// each rank is one operation with every rank that makes it; the k-th send
// (send, isend, send_object_list) from rank a to rank b pairs with the k-th
// receive on b from a (recv, irecv, recv_object_list). A receive from any
// source (src None) is linked with nothing.
//
// Each operation gets a layer, a Lamport clock: 1 + the largest layer any
// of its members reached before it (0 before a rank's first call). Two
// operations are ordered by (step, layer); an operation of a later layer
// may depend on one of an earlier layer, never the other way.
//
// Calls that do not line up (a rank waits at a call that some member never
// makes, or the members make their calls in an order no run could) are
// released one rank at a time, lowest rank first, and said in a warning;
// their layers are then only approximate.
// Thread safety: pure function.
#ifndef LOCKSTEP_COMPARE_COLLECTIVE_LINKS_H_
#define LOCKSTEP_COMPARE_COLLECTIVE_LINKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/compare/result.h"

namespace lockstep {

// A member of an operation: comms[rank_index].calls[call].
struct CallRef {
  size_t rank_index = 0;
  size_t call = 0;
};

struct CollectiveOp {
  int64_t step = -1;
  int layer = 0;
  std::vector<CallRef> members;  // in rank order
};

struct CollectiveLinks {
  std::vector<CollectiveOp> ops;  // by (step, layer, lowest member rank)
  // layer[i][j]: the layer of comms[i].calls[j]'s operation; op[i][j]: its
  // index into ops.
  std::vector<std::vector<int>> layer;
  std::vector<std::vector<size_t>> op;
};

// Links the calls of `comms` (one RankCollectives per compared (step, rank),
// in any order). Warnings are appended to `warnings`.
CollectiveLinks LinkCollectives(const std::vector<RankCollectives>& comms,
                                std::vector<std::string>* warnings);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_COLLECTIVE_LINKS_H_
