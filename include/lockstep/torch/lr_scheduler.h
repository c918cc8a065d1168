// An LrSchedule driving a torch::optim optimizer: sets the learning rate of
// every parameter group to schedule.At(step) (the same value for each
// group), as PyTorch's LRScheduler does: once on creation (step 0), then
// after each Step(). The schedule's guarantees (range, exact endpoints) hold
// for the lr the optimizer sees, stored as a double in its options.
// Call Step() once per optimizer.step(), after it.
//
// Checkpoints: SaveState() is LrScheduleState's versioned text (schedule
// and step); LoadState() replaces both, as PyTorch's load_state_dict does,
// and writes the restored lr into the optimizer.
// Thread safety: not synchronized; use from the training loop's thread.
#ifndef LOCKSTEP_TORCH_LR_SCHEDULER_H_
#define LOCKSTEP_TORCH_LR_SCHEDULER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "lockstep/core/status.h"
#include "lockstep/numerics/lr_schedule.h"
#include "lockstep/numerics/lr_schedule_state.h"

namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace lockstep {

class LrScheduler {
 public:
  // Sets every group's lr to schedule.At(0). The optimizer is not owned and
  // must outlive the scheduler.
  // Errors: InvalidArgument for a null optimizer or one without parameter
  // groups; NotSupported when the optimizer's options cannot set an lr
  // (LibTorch's error message is kept).
  static StatusOr<LrScheduler> Create(torch::optim::Optimizer* optimizer,
                                      LrSchedule schedule);

  // One scheduler step: step() + 1, and the new lr into every group.
  // Errors: as Create's NotSupported (the step is counted anyway).
  Status Step();

  double lr() const { return state_.lr(); }
  int64_t step() const { return state_.step(); }
  const LrSchedule& schedule() const { return state_.schedule(); }

  std::string SaveState() const { return state_.SaveState(); }
  // Errors: LrScheduleState::LoadState's (NotSupported for another
  // version, Corruption naming the key); the scheduler and optimizer are
  // then unchanged.
  Status LoadState(std::string_view text);

 private:
  LrScheduler(torch::optim::Optimizer* optimizer, LrScheduleState state)
      : optimizer_(optimizer), state_(std::move(state)) {}
  Status Apply();  // writes lr() into every group

  torch::optim::Optimizer* optimizer_;
  LrScheduleState state_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_LR_SCHEDULER_H_
