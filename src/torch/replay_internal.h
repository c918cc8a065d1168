// Private to torch/replay*.cc: the operator table (what kind of error each
// ATen operator may make) and the rebuilding of a recorded call against an
// ATen schema.
#ifndef LOCKSTEP_SRC_TORCH_REPLAY_INTERNAL_H_
#define LOCKSTEP_SRC_TORCH_REPLAY_INTERNAL_H_

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/pyvalue.h"
#include "lockstep/format/replay_result.h"
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
  // Reads rows by index (embedding, index_select, gather, index): its
  // backward scatter-adds, one row receiving up to every indexed position.
  bool gathers = false;
};

// The rule for an ATen operator ("aten::conv2d", an in-place "aten::add_"
// as "aten::add"); null when lockstep knows no bound for it.
const OpRule* FindOpRule(std::string_view aten_name);

// "aten::add.Tensor": an operator and its overload ("aten::relu" when it
// has none), as dump.json's "aten" key writes it.
std::string FullName(const c10::OperatorName& op);

// The first line of an exception's message (LibTorch appends a backtrace).
std::string FirstLine(std::string s);

// Why an operator's result cannot be checked from its inputs, or "" when it
// can: random operators (dropout in training, rand*, bernoulli, ...) and
// those returning uninitialized memory (empty, empty_like, ...).
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
  // Bytes each run of the call may hold at once; 0 until AdmitCall admits
  // it (Call runs no call that was not admitted).
  int64_t budget = 0;
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

// How a replay run prepares the recorded arguments (replay_check.cc).
enum class Mode {
  kFloat64,   // floating tensors, dtypes and scalars in float64: the reference
  kAbs,       // the same on |inputs|: the scale of sums of products
  kRecorded,  // as recorded: LibTorch CPU's own result in the dtype
  kEmulated,  // fp16 computed in fp32 (LibTorch 1.13 CPU lacks fp16 kernels)
};

// What one recorded tensor is checked with.
struct Rule {
  ReplayOpKind kind = ReplayOpKind::kNormalization;
  double ulps = 0;
  ReplayScale scale = ReplayScale::kTensorMax;
  int64_t k = 1;
  std::string kind_name;
};

at::Tensor PrepareTensor(const at::Tensor& t, Mode m);
// The call's arguments prepared for mode `m` (fresh tensors).
std::vector<c10::IValue> Prepare(const BoundCall& call, Mode m);
// Appends `v` flattened as the dump records results (tuples and tensor
// lists opened).
void FlattenResult(const c10::IValue& v, std::vector<c10::IValue>* out);
// Runs the admitted call within its budget (WithinBudget) and checks each
// output's geometry (GeometryProblem); its results flattened (tuples and
// tensor lists). Throws CallRefused, or what LibTorch throws.
std::vector<c10::IValue> Call(const BoundCall& call,
                              std::vector<c10::IValue> args);
// The call's tensor inputs in the order their gradients are recorded:
// lockstep's probe records one per tensor argument (null where none flows);
// msprobe one per differentiable (floating) tensor argument. Wrapped numbers
// are not inputs.
std::vector<at::Tensor*> TensorInputs(std::vector<c10::IValue>* args,
                                      bool floating_only);
// The rule of a forward call of `op` (the table's, or the lenient
// normalisation bound over the largest input for unlisted operators).
Rule ForwardRule(const std::string& op, const std::vector<c10::IValue>& args,
                 const std::vector<at::Tensor>& outs);
// Measures `recorded` against the float64 `reference` (LibTorch CPU's `cpu`
// and the |inputs| scale `abs` where given) and fills `c`'s numbers and
// verdict.
void Check(const at::Tensor& recorded, const at::Tensor& reference,
           const at::Tensor* abs, const at::Tensor* cpu, const Rule& rule,
           bool backward, ReplayCheck* c);
// `run` in the recorded dtype, or through fp32 where LibTorch has no fp16
// kernel; nullopt when neither runs.
std::optional<std::vector<c10::IValue>> CpuRun(
    const BoundCall& call,
    const std::function<std::vector<c10::IValue>(Mode)>& run);
// The checks of one forward call against its recorded outputs (flattened;
// nullopt where not saved), appended to `out` with `base`'s entry fields.
// Throws what LibTorch throws.
void CheckForward(const BoundCall& call,
                  const std::vector<std::optional<at::Tensor>>& recorded,
                  const ReplayCheck& base, std::vector<ReplayCheck>* out);

// ---- What a call must pass to run (replay_allowlist.cc, replay_guard.cc;
// docs/replay.md#allowlist and #limits). ----

// Why replay does not run operator `aten_name` ("aten::add_.Tensor"), or
// "" when it is on the allowlist: the operators of the bound table
// (FindOpRule; in-place forms too, as replay writes into its own copies)
// and a few pure operators with no tensor result (item, size, ...). Every
// other operator, of any namespace, is refused; file, raw-view and
// storage operators with a reason of their own.
std::string OffAllowlistReason(std::string_view aten_name);

// The memory a replayed call may hold at once.
struct CallLimits {
  int64_t max_bytes = 0;  // > 0: this; 0: the default rule below
};
// Default: kCallBudgetFactor x the bytes of the call's tensors (arguments
// and the recorded tensors it is checked against) in float64, at least
// kMinCallBudget.
inline constexpr int64_t kMinCallBudget = int64_t{64} << 20;
inline constexpr double kCallBudgetFactor = 16;
int64_t CallBudgetBytes(const BoundCall& call, double recorded_bytes,
                        const CallLimits& limits);

// A call refused as it ran (memory past its budget, an output reaching
// past its storage): what() is the reason, for the entry's row.
class CallRefused : public std::runtime_error {
 public:
  CallRefused(std::string op, const std::string& reason)
      : std::runtime_error(reason), op_(std::move(op)) {}
  const std::string& op() const { return op_; }  // "aten::conv2d"

 private:
  std::string op_;
};

// What is wrong with `t`'s sizes, strides and storage offset against the
// bytes of its storage (negative values, overflow, an element past the
// end), or "" when every element lies inside it.
std::string GeometryProblem(const at::Tensor& t);

// Admits `call` to run, setting call->budget, or returns why not (and
// leaves it 0): a random or uninitialized-memory operator (RandomReason),
// an operator off the allowlist, an argument whose geometry reaches past
// its storage, or outputs (a convolution's also its im2col buffer)
// estimated before the call, from the schema and the arguments (the
// operator's meta kernel, or the convolution arithmetic), to take more
// than the budget. `recorded_bytes`: the recorded tensors the call is
// checked against (outputs, gradients), counted in float64.
std::string AdmitCall(BoundCall* call, double recorded_bytes,
                      const CallLimits& limits);

// Runs `fn` with this thread's CPU allocations counted against call.budget
// (torch/call_budget.h): CallRefused, with the sizes, where one would pass
// it, or where the call was not admitted.
void WithinBudget(const BoundCall& call, const std::function<void()>& fn);

// "1.5 GiB".
std::string FormatBytes(double bytes);

// Whether `v` is a tensor, a tensor list or a list of optional tensors
// (index's); MapTensors: `v` with f applied to each tensor in it, other
// values as they are.
bool HoldsTensors(const c10::IValue& v);
c10::IValue MapTensors(const c10::IValue& v,
                       const std::function<at::Tensor(const at::Tensor&)>& f);

}  // namespace lockstep::replay

#endif  // LOCKSTEP_SRC_TORCH_REPLAY_INTERNAL_H_
