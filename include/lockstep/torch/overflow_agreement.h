// How data-parallel ranks agree on one overflow decision: the found-inf
// flag is all-reduced with MAX before any rank decides to skip, so no rank
// steps while another skips (which would make the replicas drift apart).
//
// GradScaler calls AnyRank() once per optimizer and iteration, in program
// order, so every rank must call Unscale/Step on the same optimizers in the
// same order (as with any collective). A single-process program passes no
// agreement (nullptr) and needs no communication library; GlooGroup
// (gloo_group.h) is the c10d/Gloo implementation.
//
// Thread safety: an implementation is used from one thread at a time.
#ifndef LOCKSTEP_TORCH_OVERFLOW_AGREEMENT_H_
#define LOCKSTEP_TORCH_OVERFLOW_AGREEMENT_H_

#include "lockstep/core/status.h"

namespace lockstep {

class OverflowAgreement {
 public:
  virtual ~OverflowAgreement() = default;

  // True when `local_found_inf` is true on any rank (all-reduce MAX).
  // Blocks until every rank has called it. Errors: IoError when the
  // collective fails or times out (a rank died or hung).
  virtual StatusOr<bool> AnyRank(bool local_found_inf) = 0;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_OVERFLOW_AGREEMENT_H_
