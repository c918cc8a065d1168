// LeNet-5 for the examples: the model of the MindSpore loss-scale tutorial
// (1x32x32 inputs, 10 classes), written with the operators a Python model
// would call (conv2d, relu, max_pool2d, linear, cross_entropy) so that a
// probe dump of it reads like an msprobe dump of the Python model.
#ifndef LOCKSTEP_EXAMPLES_LENET_MODEL_H_
#define LOCKSTEP_EXAMPLES_LENET_MODEL_H_

#include <ATen/record_function.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "lockstep/torch/overflow_status.h"
#include "lockstep/torch/probe.h"

namespace lockstep_examples {

// How activations are stored between layers.
enum class ActDType { kFloat32, kBFloat16, kFloat16Emulated };

struct LeNetImpl : torch::nn::Module {
  LeNetImpl()
      : conv1(register_module(
            "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 6, 5)))),
        conv2(register_module(
            "conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(6, 16, 5)))),
        fc1(register_module("fc1", torch::nn::Linear(16 * 5 * 5, 120))),
        fc2(register_module("fc2", torch::nn::Linear(120, 84))),
        fc3(register_module("fc3", torch::nn::Linear(84, 10))) {}

  // fp16 on a CPU LibTorch 1.13 cannot compute most operators in half: the
  // emulation rounds each activation through half instead, and its
  // gradient in the backward pass (IEEE: overflow gives inf, which a loss
  // scaler must catch). The rounding is hidden from the probe (it stands
  // for the hardware's storage format).
  at::Tensor Store(const at::Tensor& x) const {
    if (act != ActDType::kFloat16Emulated) return x;
    at::DisableRecordFunctionGuard hidden;
    return fp16.Apply(x);
  }

  at::Tensor Conv(torch::nn::Conv2d& c, const at::Tensor& x) {
    lockstep::ModuleScope scope(probe, *c, {x});
    at::Tensor y = Store(at::conv2d(x, c->weight, c->bias));
    scope.SetOutputs({y});
    return y;
  }
  at::Tensor Linear(torch::nn::Linear& l, const at::Tensor& x) {
    lockstep::ModuleScope scope(probe, *l, {x});
    at::Tensor y = Store(at::linear(x, l->weight, l->bias));
    scope.SetOutputs({y});
    return y;
  }

  at::Tensor forward(at::Tensor x) {
    x = Store(x);
    x = at::max_pool2d(Store(at::relu(Conv(conv1, x))), {2, 2});
    x = at::max_pool2d(Store(at::relu(Conv(conv2, x))), {2, 2});
    x = x.flatten(1);
    x = Store(at::relu(Linear(fc1, x)));
    x = Store(at::relu(Linear(fc2, x)));
    return Linear(fc3, x);
  }

  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc1, fc2, fc3;
  ActDType act = ActDType::kFloat32;
  lockstep::Fp16Emulator fp16{lockstep::Fp16OverflowMode::kInfNan, nullptr};
  lockstep::Probe* probe = nullptr;  // for module entries (level L0/mix)
};
TORCH_MODULE(LeNet);

}  // namespace lockstep_examples

#endif  // LOCKSTEP_EXAMPLES_LENET_MODEL_H_
