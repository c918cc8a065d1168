#include "lockstep/torch/lr_scheduler.h"

#include <c10/util/Exception.h>
#include <torch/optim/optimizer.h>

#include <utility>

namespace lockstep {

StatusOr<LrScheduler> LrScheduler::Create(torch::optim::Optimizer* optimizer,
                                          LrSchedule schedule) {
  if (optimizer == nullptr) {
    return Status::InvalidArgument("LrScheduler", "optimizer is null");
  }
  if (optimizer->param_groups().empty()) {
    return Status::InvalidArgument("LrScheduler",
                                   "optimizer has no parameter groups");
  }
  LrScheduler s(optimizer, LrScheduleState(std::move(schedule)));
  LOCKSTEP_RETURN_IF_ERROR(s.Apply());
  return s;
}

Status LrScheduler::Step() {
  state_.Advance();
  return Apply();
}

Status LrScheduler::LoadState(std::string_view text) {
  LOCKSTEP_ASSIGN_OR_RETURN(LrScheduleState loaded,
                            LrScheduleState::LoadState(text));
  state_ = std::move(loaded);
  return Apply();
}

Status LrScheduler::Apply() {
  double lr = state_.lr();
  try {
    for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
  } catch (const c10::Error& e) {
    return Status::NotSupported("LrScheduler: optimizer options",
                                e.what_without_backtrace());
  }
  return Status::Ok();
}

}  // namespace lockstep
