// msprobe names for ATen operators (docs/msprobe_reference.md §2.2), so that a
// lockstep probe dump lines up with an msprobe dump of the same model where
// the operators correspond.
//
// An ATen operator `aten::<op>[.overload]` is named
//   Functional.<f>   when it is what a torch.nn.functional call records
//                    (aten::linear -> Functional.linear, aten::_softmax ->
//                    Functional.softmax, aten::cross_entropy_loss ->
//                    Functional.cross_entropy, aten::max_pool2d -> ...),
//   Tensor.<op>      for Tensor-only methods and in-place variants (add_,
//                    view, t, contiguous, ...),
//   Torch.<op>       for other operators with a torch.<op> function (add,
//                    matmul, cos, sum, cat, ...),
//   Aten.<op>        otherwise (internal `_` operators, unknown ones): the
//                    fallback, e.g. Aten._log_softmax_backward_data.
// torch.distributed's collectives, which the dispatcher runs as `c10d::`
// operators (PyTorch 1.13+: c10d::allreduce_, c10d::send, ...), are
// Distributed.<function> as msprobe names them (Distributed.all_reduce,
// Distributed.all_gather, Distributed.recv, ...).
// Other names outside the `aten::` namespace return "" (not dumped): profiler
// scopes, autograd engine records, custom operators; so do the operators
// whose outputs are uninitialized memory (empty, empty_like, empty_strided,
// new_empty, new_empty_strided, resize_), whose statistics mean nothing.
//
// ATen cannot tell `x.cos()` from `torch.cos(x)` (msprobe writes Tensor.cos
// and Torch.cos): lockstep always writes Torch.<op> for those, so against
// an msprobe dump such rows stay unmatched (docs/probe.md).
// Thread safety: pure functions; ApiCallCounter is not synchronized.
#ifndef LOCKSTEP_FORMAT_API_NAMING_H_
#define LOCKSTEP_FORMAT_API_NAMING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace lockstep {

// "Functional.linear" for "aten::linear", ... ; "" for non-aten names.
std::string MsprobeApiName(std::string_view aten_name);

// The API of an entry name: "Tensor.addcdiv_.7.forward" -> "addcdiv_"
// (a view into `entry`; `entry` itself when it has no dot).
std::string_view EntryApi(std::string_view entry);

// "Module.{path}.{Class}" for a module at `path` ("conv1", "features.0")
// whose C++ class is `cpp_class` ("torch::nn::Conv2dImpl" -> "Conv2d",
// "LeNetImpl" -> "LeNet", "Net" -> "Net"). An empty path is the root,
// written as the class alone: "Module.LeNet".
std::string MsprobeModuleName(std::string_view path,
                              std::string_view cpp_class);

// The class name msprobe prints for a C++ module class: namespaces and a
// trailing "Impl" dropped.
std::string ModuleClassName(std::string_view cpp_class);

// Counts calls per API so that the n-th call of Torch.add becomes
// Torch.add.{n}.forward (starting at 0), as msprobe numbers them.
class ApiCallCounter {
 public:
  // Returns the index of this call of `api` and advances the count.
  int64_t Next(const std::string& api) { return counts_[api]++; }
  void Reset() { counts_.clear(); }

 private:
  std::unordered_map<std::string, int64_t> counts_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_API_NAMING_H_
