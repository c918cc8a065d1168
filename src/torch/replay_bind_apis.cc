// Which ATen operators a recorded call may be (replay_bind_internal.h):
// msprobe's Python API names mapped to ATen, and every overload of an ATen
// operator.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "torch/replay_bind_internal.h"

namespace lockstep::replay {

const std::vector<std::string>* Overloads(const std::string& name) {
  static std::once_flag once;
  static std::unordered_map<std::string, std::vector<std::string>>* all;
  std::call_once(once, [] {
    all = new std::unordered_map<std::string, std::vector<std::string>>();
    for (const c10::OperatorName& op :
         c10::Dispatcher::singleton().getAllOpNames()) {
      (*all)[op.name].push_back(op.overload_name);
    }
  });
  auto it = all->find(name);
  return it == all->end() ? nullptr : &it->second;
}

namespace {

PyApi Alias(std::string aten, bool swap = false) {
  PyApi a;
  a.aten = std::move(aten);
  a.swap = swap;
  return a;
}

PyApi Sig(std::string aten, std::vector<std::string> params,
          std::vector<std::pair<std::string, c10::IValue>> constants = {}) {
  PyApi a;
  a.aten = std::move(aten);
  a.params = std::move(params);
  a.constants = std::move(constants);
  return a;
}

c10::IValue Dtype(c10::ScalarType t) {
  return c10::IValue(static_cast<int64_t>(t));
}

PyApi NotReplayable(std::string why) {
  PyApi a;
  a.not_replayable = std::move(why);
  return a;
}

}  // namespace

const std::map<std::string, PyApi>& PyApis() {
  static const auto* apis = new std::map<std::string, PyApi>{
      {"__add__", Alias("aten::add")},
      {"__radd__", Alias("aten::add", true)},
      {"__iadd__", Alias("aten::add_")},
      {"__sub__", Alias("aten::sub")},
      {"__rsub__", Alias("aten::rsub")},
      {"__isub__", Alias("aten::sub_")},
      {"__mul__", Alias("aten::mul")},
      {"__rmul__", Alias("aten::mul", true)},
      {"__imul__", Alias("aten::mul_")},
      {"__truediv__", Alias("aten::div")},
      {"__rtruediv__", Alias("aten::div", true)},
      {"__itruediv__", Alias("aten::div_")},
      {"__div__", Alias("aten::div")},
      {"__matmul__", Alias("aten::matmul")},
      {"__rmatmul__", Alias("aten::matmul", true)},
      {"__neg__", Alias("aten::neg")},
      {"__abs__", Alias("aten::abs")},
      {"__pow__", Alias("aten::pow")},
      {"__rpow__", Alias("aten::pow", true)},
      {"__floordiv__", Alias("aten::floor_divide")},
      {"__mod__", Alias("aten::remainder")},
      {"__invert__", Alias("aten::bitwise_not")},
      {"__eq__", Alias("aten::eq")},
      {"__ne__", Alias("aten::ne")},
      {"__lt__", Alias("aten::lt")},
      {"__le__", Alias("aten::le")},
      {"__gt__", Alias("aten::gt")},
      {"__ge__", Alias("aten::ge")},
      {"__getitem__", NotReplayable("indexing (x[...]): the index is Python "
                                    "syntax, not ATen arguments")},
      {"__setitem__",
       NotReplayable(
           "indexed assignment (x[...] = v): the index is Python syntax")},
      {"softmax",
       Sig("aten::softmax", {"input", "dim", "_stacklevel", "dtype"})},
      {"log_softmax",
       Sig("aten::log_softmax", {"input", "dim", "_stacklevel", "dtype"})},
      {"embedding",
       Sig("aten::embedding", {"indices", "weight", "padding_idx", "max_norm",
                               "norm_type", "scale_grad_by_freq", "sparse"})},
      {"batch_norm", Sig("aten::batch_norm",
                         {"input", "running_mean", "running_var", "weight",
                          "bias", "training", "momentum", "eps"},
                         {{"cudnn_enabled", c10::IValue(true)}})},
      {"cross_entropy",
       Sig("aten::cross_entropy_loss",
           {"input", "target", "weight", "size_average", "ignore_index",
            "reduce", "reduction", "label_smoothing"})},
      {"nll_loss",
       Sig("aten::nll_loss_nd", {"input", "target", "weight", "size_average",
                                 "ignore_index", "reduce", "reduction"})},
      {"mse_loss", Sig("aten::mse_loss", {"input", "target", "size_average",
                                          "reduce", "reduction"})},
      {"l1_loss", Sig("aten::l1_loss", {"input", "target", "size_average",
                                        "reduce", "reduction"})},
      {"dropout", Sig("aten::dropout", {"input", "p", "train", "inplace"})},
      {"max_pool2d",
       Sig("aten::max_pool2d", {"input", "kernel_size", "stride", "padding",
                                "dilation", "ceil_mode", "return_indices"})},
      {"pad", Sig("aten::constant_pad_nd", {"input", "pad", "mode", "value"})},
      {"float", Sig("aten::to", {"input"}, {{"dtype", Dtype(at::kFloat)}})},
      {"half", Sig("aten::to", {"input"}, {{"dtype", Dtype(at::kHalf)}})},
      {"bfloat16",
       Sig("aten::to", {"input"}, {{"dtype", Dtype(at::kBFloat16)}})},
      {"double", Sig("aten::to", {"input"}, {{"dtype", Dtype(at::kDouble)}})},
  };
  return *apis;
}

std::pair<std::string, std::string> SplitApiName(const std::string& entry) {
  size_t first = entry.find('.');
  std::string prefix = entry.substr(0, first);
  std::string rest = first == std::string::npos ? "" : entry.substr(first + 1);
  // Drop ".<n>.forward".
  for (int k = 0; k < 2; ++k) {
    size_t dot = rest.rfind('.');
    if (dot != std::string::npos) rest.resize(dot);
  }
  return {prefix, rest};
}

}  // namespace lockstep::replay
