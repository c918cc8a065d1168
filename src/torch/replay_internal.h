// Private to torch/replay*.cc: the operator table (what kind of error each
// ATen operator may make) and the rebuilding of a recorded call against an
// ATen schema.
#ifndef LOCKSTEP_SRC_TORCH_REPLAY_INTERNAL_H_
#define LOCKSTEP_SRC_TORCH_REPLAY_INTERNAL_H_

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/pyvalue.h"
#include "lockstep/numerics/replay_error.h"

namespace lockstep::replay {

// How the number of summed terms k of an accumulating op is found.
enum class Terms {
  kOne,         // elementwise
  kInnerDim,    // input 0's last dim (matmul, mm, bmm, linear, dot)
  kInnerDim1,   // input 1's last dim (addmm, baddbmm, addmv)
  kConvWeight,  // weight (input 1): numel / size(0)
  kReduced,     // numel(input 0) / numel(output 0)
  kDimArg,      // input 0's size along the dim argument (argument 1)
  kNormShape,   // product of the normalized_shape argument (argument 1)
  kPerChannel,  // numel(input 0) / size(1) (batch norm)
  kGroups,      // numel(input 0) / (size(0) * groups argument 1)
  kAllInput,    // numel(input 0) (losses)
};

struct OpRule {
  ReplayOpKind kind = ReplayOpKind::kElementwise;
  double ulps = 0;  // kElementwise
  ReplayScale scale = ReplayScale::kSelf;
  Terms terms = Terms::kOne;
  int extra_terms = 0;    // + bias or additive input
  const char* what = "";  // "exact", "rounded", "transcendental", ...
};

// The rule for an ATen operator ("aten::conv2d", an in-place "aten::add_"
// as "aten::add"); null when lockstep knows no bound for it.
const OpRule* FindOpRule(std::string_view aten_name);

// Why an operator's result cannot be checked from its inputs, or "" when it
// can: random operators (dropout in training, rand*, bernoulli, ...).
// `args` are the bound arguments (dropout with p == 0 or train false is
// deterministic).
std::string RandomReason(std::string_view aten_name,
                         const std::vector<c10::IValue>& args);

// k for `rule` given the bound arguments and the float64 outputs.
int64_t TermCount(const OpRule& rule, const std::vector<c10::IValue>& args,
                  const std::vector<at::Tensor>& outputs);

// Reads a recorded tensor (its dump.json dict) into a CPU tensor.
using TensorLoader =
    std::function<StatusOr<at::Tensor>(const PyValue& tensor_dict)>;

// A recorded call bound to one ATen schema.
struct BoundCall {
  c10::OperatorHandle op;
  std::string name;               // "aten::add.Tensor"
  std::vector<c10::IValue> args;  // in schema order, defaults filled
};

// Rebuilds the call of forward entry `entry_name` (dump.json value `entry`)
// as an ATen operator call. The operator: the entry's "aten" key (lockstep's
// probe, tensor task) or else the API name mapped to ATen (msprobe's names:
// Functional.softmax -> aten::softmax, Tensor.__matmul__ -> aten::matmul,
// ...), trying each overload. NotSupported (with why) when no operator or
// overload takes the recorded arguments.
StatusOr<BoundCall> BindCall(const std::string& entry_name,
                             const PyValue& entry, const TensorLoader& load);

// The flat list of leaves of a recorded value tree (input_args, output):
// nested lists flattened, dicts and None kept as leaves.
void FlattenRecorded(const PyValue& v, std::vector<const PyValue*>* out);

// True for a recorded tensor dict ({"type": "torch.Tensor", ...}).
bool IsRecordedTensor(const PyValue& v);

}  // namespace lockstep::replay

#endif  // LOCKSTEP_SRC_TORCH_REPLAY_INTERNAL_H_
