// What the files of TensorSummarizer (tensor_summary.h) share:
// tensor_summary.cc, tensor_summary_stats.cc and tensor_summary_deferred.cc.
// Private to them.
#ifndef LOCKSTEP_SRC_TORCH_TENSOR_SUMMARY_INTERNAL_H_
#define LOCKSTEP_SRC_TORCH_TENSOR_SUMMARY_INTERNAL_H_

namespace lockstep::summary_detail {

// msprobe's statistics of a tensor, in dump.json's order.
inline constexpr const char* kStatKeys[] = {"Max", "Min", "Mean", "Norm"};

}  // namespace lockstep::summary_detail

#endif  // LOCKSTEP_SRC_TORCH_TENSOR_SUMMARY_INTERNAL_H_
