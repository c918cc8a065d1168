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
// the faulty operator's outputs differ while its inputs agree.
#ifndef LOCKSTEP_EXAMPLES_LENET_FAULTS_H_
#define LOCKSTEP_EXAMPLES_LENET_FAULTS_H_

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <cmath>
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

// Moves x by `ulps` representable floats away from zero (in place).
inline void AddUlps(at::Tensor& x, int ulps) {
  at::NoGradGuard no_grad;
  at::Tensor c = x.contiguous();
  float* p = c.data_ptr<float>();
  for (int64_t i = 0; i < c.numel(); ++i) {
    for (int k = 0; k < ulps; ++k)
      p[i] = std::nextafter(p[i], p[i] < 0 ? -INFINITY : INFINITY);
  }
  if (!c.is_same(x)) x.copy_(c);
}

inline void FaultKernel(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                        torch::jit::Stack* stack) {
  c10::impl::ExcludeDispatchKeyGuard exclude(kFaultKey);
  const std::string& name = op.schema().name();
  FaultState* s = t_fault;
  bool conv = name == "aten::conv2d", linear = name == "aten::linear";
  bool hit = s != nullptr &&
             ((conv && s->fault == Fault::kConv2Bf16 && ++s->conv_calls == 2) ||
              (linear && s->fault == Fault::kFc2Ulp && ++s->linear_calls == 2));
  if (hit && conv) {
    for (size_t i = stack->size() - 7; i < stack->size() - 4; ++i) {
      c10::IValue& v = (*stack)[i];
      if (v.isTensor()) v = v.toTensor().to(at::kBFloat16);
    }
  }
  op.callBoxed(stack);
  if (!hit) return;
  at::Tensor y = stack->back().toTensor();
  if (conv) {
    stack->back() = y.to(at::kFloat);
  } else {
    AddUlps(y, 4);
  }
}

TORCH_LIBRARY_IMPL(_, TESTING_ONLY_GenericMode, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, TESTING_ONLY_GenericMode, m) {
  m.impl("conv2d", torch::CppFunction::makeFromBoxedFunction<&FaultKernel>());
  m.impl("linear", torch::CppFunction::makeFromBoxedFunction<&FaultKernel>());
}

}  // namespace lockstep_examples

#endif  // LOCKSTEP_EXAMPLES_LENET_FAULTS_H_
