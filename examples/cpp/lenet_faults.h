// Realistic precision faults for the examples, injected into one operator
// without changing what the probe sees of the program: a kernel for
// DispatchKey::TESTING_ONLY_GenericMode (a mode key, above autograd) wraps
// the real operator while a FaultScope is alive on the thread.
//
//   conv2-bf16   the second conv2d of each forward runs in bfloat16 (an
//                operator silently run in lower precision)
//   fc2-ulp      the second linear of each forward returns results 4 ulp
//                off (a kernel with a few-ulp error)
//
// The operators keep their names, inputs and autograd graph: a dump shows
// the faulty operator's outputs differ while its inputs agree. The kernel
// and its registration are in examples/cpp/lenet/faults.cc (a separate
// translation unit, compiled alongside lenet.cc).
#ifndef LOCKSTEP_EXAMPLES_LENET_FAULTS_H_
#define LOCKSTEP_EXAMPLES_LENET_FAULTS_H_

#include <c10/core/DispatchKey.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <string>

namespace lockstep_examples {

enum class Fault { kNone, kConv2Bf16, kFc2Ulp };

inline bool ParseFault(const std::string& s, Fault* f) {
  if (s == "none")
    *f = Fault::kNone;
  else if (s == "conv2-bf16")
    *f = Fault::kConv2Bf16;
  else if (s == "fc2-ulp")
    *f = Fault::kFc2Ulp;
  else
    return false;
  return true;
}

struct FaultState {
  Fault fault = Fault::kNone;
  int conv_calls = 0;
  int linear_calls = 0;
};
inline thread_local FaultState* t_fault = nullptr;

constexpr c10::DispatchKey kFaultKey =
    c10::DispatchKey::TESTING_ONLY_GenericMode;

// Active for one forward pass on this thread.
class FaultScope {
 public:
  explicit FaultScope(Fault f) : include_(kFaultKey) {
    state_.fault = f;
    t_fault = f == Fault::kNone ? nullptr : &state_;
  }
  ~FaultScope() { t_fault = nullptr; }

 private:
  c10::impl::IncludeDispatchKeyGuard include_;
  FaultState state_;
};

}  // namespace lockstep_examples

#endif  // LOCKSTEP_EXAMPLES_LENET_FAULTS_H_
