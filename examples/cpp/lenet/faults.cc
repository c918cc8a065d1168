// The fault kernel of lenet_faults.h and its registration for
// DispatchKey::TESTING_ONLY_GenericMode.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cmath>
#include <string>

#include "examples/cpp/lenet_faults.h"

namespace lockstep_examples {
namespace {

// Moves x by `ulps` representable floats away from zero (in place).
void AddUlps(at::Tensor& x, int ulps) {
  at::NoGradGuard no_grad;
  at::Tensor c = x.contiguous();
  float* p = c.data_ptr<float>();
  for (int64_t i = 0; i < c.numel(); ++i) {
    for (int k = 0; k < ulps; ++k)
      p[i] = std::nextafter(p[i], p[i] < 0 ? -INFINITY : INFINITY);
  }
  if (!c.is_same(x)) x.copy_(c);
}

void FaultKernel(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
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

}  // namespace

TORCH_LIBRARY_IMPL(_, TESTING_ONLY_GenericMode, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, TESTING_ONLY_GenericMode, m) {
  m.impl("conv2d", torch::CppFunction::makeFromBoxedFunction<&FaultKernel>());
  m.impl("linear", torch::CppFunction::makeFromBoxedFunction<&FaultKernel>());
}

}  // namespace lockstep_examples
