// A schedule's position in training: the LrSchedule and the number of
// scheduler steps taken, with a checkpoint format. The torch layer's
// LrScheduler wraps one and writes lr() into an optimizer.
//
// Checkpoint text: "lockstep-lr-schedule 1", then one "key value" line per
// ScheduleConfig field (field names as in lr_schedule.h; the kind and ramp
// shapes by name; doubles in hex-float form so they round-trip exactly;
// boundaries and values comma-separated) and "step N".
// Thread safety: not synchronized; one per training loop.
#ifndef LOCKSTEP_NUMERICS_LR_SCHEDULE_STATE_H_
#define LOCKSTEP_NUMERICS_LR_SCHEDULE_STATE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/numerics/lr_schedule.h"

namespace lockstep {

class LrScheduleState {
 public:
  // REQUIRES: step >= 0 (checked).
  explicit LrScheduleState(LrSchedule schedule, int64_t step = 0);

  // The learning rate for the current step: schedule().At(step()).
  double lr() const { return schedule_.At(step_); }
  // One scheduler step. REQUIRES: step() < INT64_MAX (checked).
  void Advance();
  int64_t step() const { return step_; }
  const LrSchedule& schedule() const { return schedule_; }

  // The checkpoint text (see the file comment).
  std::string SaveState() const;
  // Restores a state saved by SaveState(). Errors: NotSupported for another
  // format version ("version 2; this build reads 1"); Corruption naming the
  // line or key for anything malformed, missing, duplicated, unknown, or a
  // configuration that does not validate (the validation message is kept)
  // or a negative step.
  static StatusOr<LrScheduleState> LoadState(std::string_view text);

 private:
  LrSchedule schedule_;
  int64_t step_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_NUMERICS_LR_SCHEDULE_STATE_H_
