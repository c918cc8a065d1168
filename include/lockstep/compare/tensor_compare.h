// Tensor ("all") mode of msprobe HEAD for one matched row
// (docs/msprobe_reference.md §3.4–3.5): the validation chain (missing data,
// empty, shape after squeeze, 0-d, inf/nan positions, dtype) and the six
// metrics from one fused pass over both tensors, rounded and spelled as
// msprobe prints them.
// Thread safety: pure functions; `threads` bounds the parallelism inside.
#ifndef LOCKSTEP_COMPARE_TENSOR_COMPARE_H_
#define LOCKSTEP_COMPARE_TENSOR_COMPARE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/compare/msprobe_row.h"
#include "lockstep/compare/result.h"
#include "lockstep/format/tensor.h"

namespace lockstep {

// What lockstep learned about a tensor pair beyond msprobe's cells.
struct TensorPairFacts {
  bool compared = false;      // metrics were computed
  bool unreadable = false;    // a tensor file was missing or corrupt
  bool data_missing = false;  // one side has a tensor file, the other none
  // A tensor file's shape is not the one its dump.json entry gives (a
  // 0-element file against "shape": [4] once read as empty, and passed).
  bool file_mismatch = false;
  bool shape_mismatch = false;
  bool nonfinite_mismatch = false;  // inf/nan at different positions
  int64_t target_nonfinite = 0;
  int64_t baseline_nonfinite = 0;
  double cosine = std::numeric_limits<double>::quiet_NaN();  // unrounded
  double one_minus_cos = std::numeric_limits<double>::quiet_NaN();
  double max_abs_err = std::numeric_limits<double>::quiet_NaN();
  double max_rel_err = std::numeric_limits<double>::quiet_NaN();
  double one_thousandth_ratio = std::numeric_limits<double>::quiet_NaN();
  // ‖a − b‖ / ‖b‖ (0 when both are 0, inf when only b is).
  double rel_l2_err = std::numeric_limits<double>::quiet_NaN();
};

// msprobe's np.squeeze: drops every dimension of size 1.
std::vector<int64_t> Squeeze(const std::vector<int64_t>& shape);

// Fills row->metrics and row->metric_message for a pair of loaded tensors.
TensorPairFacts CompareTensorPair(const Tensor& npu, const Tensor& bench,
                                  int threads, MsprobeRow* row);

// Fills the six cells with `value` ("unsupported", "N/A", ...) and sets the
// message.
void SetAllMetrics(MsprobeRow* row, const char* value,
                   const std::string& message);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_TENSOR_COMPARE_H_
