// The operator table of lockstep replay: for each ATen operator, what kind
// of error a correct kernel may make (docs/replay.md lists it).
#include <ATen/ATen.h>

#include <unordered_map>

#include "torch/replay_internal.h"

namespace lockstep::replay {
namespace {

using Map = std::unordered_map<std::string_view, OpRule>;

void Add(Map* m, std::initializer_list<std::string_view> names, OpRule r) {
  for (std::string_view n : names) m->emplace(n, r);
}

Map BuildRules() {
  Map m;
  OpRule exact{ReplayOpKind::kElementwise,
               0,
               ReplayScale::kSelf,
               Terms::kOne,
               0,
               "exact"};
  // Data movement, selection, comparison and casts: the result is an input
  // value, or one value rounded once to the output dtype.
  Add(&m,
      {"to",
       "_to_copy",
       "copy",
       "clone",
       "contiguous",
       "view",
       "reshape",
       "_unsafe_view",
       "view_as",
       "reshape_as",
       "t",
       "transpose",
       "permute",
       "expand",
       "expand_as",
       "squeeze",
       "unsqueeze",
       "flatten",
       "unflatten",
       "select",
       "slice",
       "narrow",
       "split",
       "split_with_sizes",
       "chunk",
       "unbind",
       "cat",
       "concat",
       "stack",
       "scatter",
       "masked_fill",
       "masked_scatter",
       "where",
       "relu",
       "threshold",
       "max_pool1d",
       "max_pool2d",
       "max_pool3d",
       "max_pool2d_with_indices",
       "max_pool3d_with_indices",
       "adaptive_max_pool2d",
       "max",
       "min",
       "amax",
       "amin",
       "maximum",
       "minimum",
       "fmax",
       "fmin",
       "abs",
       "neg",
       "negative",
       "sign",
       "clamp",
       "clamp_min",
       "clamp_max",
       "clip",
       "hardtanh",
       "relu6",
       "eq",
       "ne",
       "lt",
       "gt",
       "le",
       "ge",
       "logical_and",
       "logical_or",
       "logical_not",
       "logical_xor",
       "zeros_like",
       "ones_like",
       "full_like",
       "fill",
       "zero",
       "new_zeros",
       "new_ones",
       "new_full",
       "zeros",
       "ones",
       "full",
       "detach",
       "lift_fresh",
       "repeat",
       "tile",
       "roll",
       "flip",
       "tril",
       "triu",
       "constant_pad_nd",
       "index_put",
       "floor",
       "ceil",
       "round",
       "trunc",
       "type_as",
       "masked_select",
       "argmax",
       "argmin",
       "topk",
       "sort",
       "all",
       "any",
       "isnan",
       "isinf",
       "isfinite",
       "diagonal",
       "movedim",
       "swapaxes",
       "unfold",
       "dropout",
       "feature_dropout",
       "one_hot",
       "arange",
       "fmod",
       "remainder",
       "__and__",
       "__or__",
       "__xor__",
       "bitwise_and",
       "bitwise_or",
       "bitwise_not",
       "prelu",
       "leaky_relu",
       "expand_copy",
       "view_copy",
       "permute_copy",
       "transpose_copy",
       "t_copy",
       "squeeze_copy",
       "unsqueeze_copy",
       "select_copy",
       "slice_copy",
       "detach_copy",
       "scalar_tensor",
       "lift"},
      exact);
  OpRule gather = exact;
  gather.gathers = true;
  Add(&m, {"embedding", "index_select", "gather", "index"}, gather);
  // One IEEE operation, correctly rounded.
  OpRule rounded = exact;
  rounded.what = "rounded";
  Add(&m,
      {"add", "sub", "rsub", "mul", "div", "true_divide", "sqrt", "square",
       "reciprocal", "floor_divide", "hardshrink"},
      rounded);
  // A few roundings in a row.
  OpRule few{ReplayOpKind::kElementwise,
             3,
             ReplayScale::kSelf,
             Terms::kOne,
             0,
             "few roundings"};
  Add(&m,
      {"addcmul", "addcdiv", "lerp", "hardswish", "hardsigmoid", "xlogy",
       "softshrink", "threshold_backward"},
      few);
  // Elementary functions: libm-class accuracy (CUDA's documented maxima
  // for single precision are 1-4 ulp).
  OpRule transcendental{ReplayOpKind::kElementwise,
                        4,
                        ReplayScale::kSelf,
                        Terms::kOne,
                        0,
                        "transcendental"};
  Add(&m, {"exp",         "exp2",
           "expm1",       "log",
           "log2",        "log10",
           "log1p",       "sin",
           "cos",         "tan",
           "asin",        "acos",
           "atan",        "atan2",
           "sinh",        "cosh",
           "tanh",        "asinh",
           "acosh",       "atanh",
           "sigmoid",     "logit",
           "erf",         "erfc",
           "erfinv",      "gelu",
           "silu",        "mish",
           "softplus",    "rsqrt",
           "pow",         "float_power",
           "elu",         "selu",
           "celu",        "glu",
           "log_sigmoid", "log_sigmoid_forward",
           "softsign",    "sinc",
           "lgamma",      "digamma",
           "hypot"},
      transcendental);
  // Sums of products: measured against the op on |inputs|.
  OpRule acc{ReplayOpKind::kAccumulation,
             0,
             ReplayScale::kAbsInputs,
             Terms::kInnerDim,
             0,
             "accumulation"};
  Add(&m, {"matmul", "mm", "bmm", "mv", "dot", "vdot", "inner"}, acc);
  OpRule linear = acc;
  linear.extra_terms = 1;
  Add(&m, {"linear"}, linear);
  OpRule addmm = acc;
  addmm.terms = Terms::kInnerDim1;
  addmm.extra_terms = 1;
  Add(&m, {"addmm", "addmv", "baddbmm", "addbmm"}, addmm);
  OpRule conv = acc;
  conv.terms = Terms::kConvWeight;
  conv.extra_terms = 1;
  Add(&m,
      {"conv1d", "conv2d", "conv3d", "convolution", "_convolution",
       "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
       "mkldnn_convolution", "_convolution_mode"},
      conv);
  OpRule reduce = acc;
  reduce.terms = Terms::kReduced;
  Add(&m, {"sum", "nansum"}, reduce);
  reduce.extra_terms = 1;  // the division
  Add(&m,
      {"mean", "nanmean", "avg_pool1d", "avg_pool2d", "avg_pool3d",
       "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
       "_adaptive_avg_pool2d"},
      reduce);
  OpRule cumsum = acc;
  cumsum.terms = Terms::kDimArg;
  Add(&m, {"cumsum"}, cumsum);
  // Normalisations and losses: measured against the tensor's largest value.
  OpRule norm{ReplayOpKind::kNormalization,
              0,
              ReplayScale::kTensorMax,
              Terms::kDimArg,
              0,
              "normalization"};
  Add(&m, {"softmax", "_softmax", "log_softmax", "_log_softmax", "logsumexp"},
      norm);
  norm.terms = Terms::kNormShape;
  Add(&m, {"layer_norm", "native_layer_norm"}, norm);
  norm.terms = Terms::kPerChannel;
  Add(&m,
      {"batch_norm", "native_batch_norm", "_batch_norm_impl_index",
       "instance_norm"},
      norm);
  norm.terms = Terms::kGroups;
  Add(&m, {"group_norm", "native_group_norm"}, norm);
  norm.terms = Terms::kAllInput;
  Add(&m,
      {"cross_entropy_loss", "nll_loss", "nll_loss_nd", "nll_loss2d",
       "nll_loss_forward", "mse_loss", "l1_loss", "smooth_l1_loss",
       "huber_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
       "kl_div"},
      norm);
  norm.terms = Terms::kReduced;
  Add(&m,
      {"norm", "linalg_vector_norm", "frobenius_norm", "var", "std", "var_mean",
       "std_mean", "prod"},
      norm);
  return m;
}

// "aten::add_.Tensor" / "add_" -> "add"; "aten::__iand__" stays.
std::string_view BaseName(std::string_view aten_name) {
  if (aten_name.starts_with("aten::")) aten_name.remove_prefix(6);
  aten_name = aten_name.substr(0, aten_name.find('.'));  // the overload
  if (aten_name.size() > 1 && aten_name.back() == '_' &&
      !aten_name.starts_with("__")) {
    aten_name.remove_suffix(1);
  }
  return aten_name;
}

int64_t Numel(const c10::IValue& v) {
  return v.isTensor() ? v.toTensor().numel() : 1;
}

}  // namespace

std::string FullName(const c10::OperatorName& op) {
  return op.overload_name.empty() ? op.name : op.name + "." + op.overload_name;
}

std::string FirstLine(std::string s) {
  size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

const OpRule* FindOpRule(std::string_view aten_name) {
  static const Map* rules = new Map(BuildRules());
  auto it = rules->find(BaseName(aten_name));
  return it == rules->end() ? nullptr : &it->second;
}

std::string RandomReason(std::string_view aten_name,
                         const std::vector<c10::IValue>& args) {
  std::string_view base = BaseName(aten_name);
  static const char* const kRandom[] = {
      "native_dropout", "alpha_dropout", "feature_alpha_dropout",
      "bernoulli",      "rand",          "randn",
      "randint",        "randperm",      "normal",
      "uniform",        "multinomial",   "rand_like",
      "randn_like",     "randint_like",  "exponential",
      "geometric",      "cauchy",        "log_normal",
      "random",         "rrelu",         "rrelu_with_noise",
      "poisson",        "fused_dropout", "_fused_dropout"};
  for (const char* r : kRandom) {
    if (base == r) {
      return "random operator: its result depends on the generator's state, "
             "not only on its inputs";
    }
  }
  static const char* const kUninitialized[] = {
      "empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided"};
  for (const char* u : kUninitialized) {
    if (base == u) {
      return "its result is uninitialized memory, not a function of its "
             "inputs";
    }
  }
  if (base == "dropout" || base == "feature_dropout") {
    // dropout(input, p, train)
    bool train = args.size() > 2 && args[2].isBool() && args[2].toBool();
    double p = args.size() > 1 && args[1].isDouble() ? args[1].toDouble() : 0;
    if (train && p > 0) {
      return "random operator: dropout in training (p = " + std::to_string(p) +
             ") draws a mask";
    }
  }
  return "";
}

int64_t TermCount(const OpRule& rule, const std::vector<c10::IValue>& args,
                  const std::vector<at::Tensor>& outputs) {
  auto tensor_arg = [&](size_t i) -> const at::Tensor* {
    return i < args.size() && args[i].isTensor() ? &args[i].toTensor()
                                                 : nullptr;
  };
  int64_t k = 1;
  const at::Tensor* a0 = tensor_arg(0);
  switch (rule.terms) {
    case Terms::kOne:
      k = 1;
      break;
    case Terms::kInnerDim:
      if (a0 != nullptr && a0->dim() > 0) k = a0->size(-1);
      break;
    case Terms::kInnerDim1:
      if (const at::Tensor* a1 = tensor_arg(1); a1 && a1->dim() > 0) {
        k = a1->size(-1);
      }
      break;
    case Terms::kConvWeight:
      if (const at::Tensor* w = tensor_arg(1);
          w && w->dim() > 0 && w->size(0) > 0) {
        k = w->numel() / w->size(0);
      }
      break;
    case Terms::kReduced:
      if (a0 != nullptr && !outputs.empty() && outputs[0].numel() > 0) {
        k = a0->numel() / outputs[0].numel();
      }
      break;
    case Terms::kDimArg:
      if (a0 != nullptr && args.size() > 1 && args[1].isInt() &&
          a0->dim() > 0) {
        int64_t d = args[1].toInt();
        if (d < 0) d += a0->dim();
        if (d >= 0 && d < a0->dim()) k = a0->size(d);
      } else if (a0 != nullptr && a0->dim() > 0) {
        k = a0->size(-1);
      }
      break;
    case Terms::kNormShape:
      if (args.size() > 1 && args[1].isIntList()) {
        for (int64_t s : args[1].toIntVector()) k *= s;
      }
      break;
    case Terms::kPerChannel:
      if (a0 != nullptr && a0->dim() > 1 && a0->size(1) > 0) {
        k = a0->numel() / a0->size(1);
      }
      break;
    case Terms::kGroups:
      if (a0 != nullptr && a0->dim() > 0 && a0->size(0) > 0 &&
          args.size() > 1 && args[1].isInt() && args[1].toInt() > 0) {
        k = a0->numel() / (a0->size(0) * args[1].toInt());
      }
      break;
    case Terms::kAllInput:
      k = a0 != nullptr ? Numel(args[0]) : 1;
      break;
  }
  return std::max<int64_t>(k, 1) + rule.extra_terms;
}

}  // namespace lockstep::replay
