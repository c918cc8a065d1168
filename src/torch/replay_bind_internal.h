// What replay_bind.cc takes from replay_bind_apis.cc: the ATen operators a
// recorded call may be, by its API name (msprobe's Python names) or by its
// ATen name (every overload). Private to torch/replay_bind*.cc.
#ifndef LOCKSTEP_SRC_TORCH_REPLAY_BIND_INTERNAL_H_
#define LOCKSTEP_SRC_TORCH_REPLAY_BIND_INTERNAL_H_

#include <ATen/core/ivalue.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::replay {

// How msprobe's Python API names reach ATen.
struct PyApi {
  std::string aten;   // "aten::add"
  bool swap = false;  // reflected operator: (self, other) -> (other, self)
  // Python parameter names in order, where they differ from ATen's by
  // position: each becomes a keyword ("input" binds ATen's "self").
  std::vector<std::string> params;
  std::vector<std::pair<std::string, c10::IValue>> constants;
  std::string not_replayable;  // why, when it cannot be replayed
};

// msprobe's Python API names that do not reach ATen as "aten::<name>" with
// the same arguments: operators (reflected ones swapped), functions whose
// Python parameters differ from ATen's or that ATen takes a constant more,
// and those that cannot be replayed.
const std::map<std::string, PyApi>& PyApis();

// Every overload of every ATen operator, by name ("aten::add" -> {"Tensor",
// "Scalar", "out", ...}); built once.
const std::vector<std::string>* Overloads(const std::string& name);

// "Functional.linear.0.forward" -> {"Functional", "linear"}.
std::pair<std::string, std::string> SplitApiName(const std::string& entry);

}  // namespace lockstep::replay

#endif  // LOCKSTEP_SRC_TORCH_REPLAY_BIND_INTERNAL_H_
