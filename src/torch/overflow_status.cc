#include "lockstep/torch/overflow_status.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>

#include <cstdint>

#include "lockstep/core/check.h"
#include "lockstep/numerics/half.h"

namespace lockstep {
namespace {

// The emulator's autograd node. Non-tensor arguments travel as int64
// (saved_data holds IValues, which cannot hold a raw pointer).
struct Fp16Round : public torch::autograd::Function<Fp16Round> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx,
                            const at::Tensor& x, int64_t mode, int64_t status) {
    ctx->saved_data["mode"] = mode;
    ctx->saved_data["status"] = status;
    return RoundToFp16(x, static_cast<Fp16OverflowMode>(mode),
                       reinterpret_cast<FloatStatus*>(status));
  }

  static torch::autograd::variable_list backward(
      torch::autograd::AutogradContext* ctx,
      torch::autograd::variable_list grad) {
    auto mode = static_cast<Fp16OverflowMode>(ctx->saved_data["mode"].toInt());
    auto* status =
        reinterpret_cast<FloatStatus*>(ctx->saved_data["status"].toInt());
    at::Tensor g =
        grad[0].defined() ? RoundToFp16(grad[0], mode, status) : grad[0];
    return {g, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

const char* Fp16OverflowModeName(Fp16OverflowMode mode) {
  return mode == Fp16OverflowMode::kSaturation ? "saturation" : "inf-nan";
}

at::Tensor RoundToFp16(const at::Tensor& x, Fp16OverflowMode mode,
                       FloatStatus* status) {
  LOCKSTEP_CHECK(x.is_floating_point());
  // x.to(kHalf) is IEEE round-to-nearest-even with +-inf on overflow; a
  // Half input would come back as itself, so it is copied.
  at::Tensor r = x.scalar_type() == at::kHalf
                     ? x.clone()
                     : x.to(at::kHalf).to(x.scalar_type());
  if (status == nullptr && mode == Fp16OverflowMode::kInfNan) return r;
  bool all_finite = at::isfinite(r).all().item<bool>();
  if (all_finite) return r;
  if (status != nullptr) status->Set();
  if (mode == Fp16OverflowMode::kSaturation) {
    r.nan_to_num_(0.0, kHalfMax, -kHalfMax);
  }
  return r;
}

at::Tensor Fp16Emulator::Apply(const at::Tensor& x) const {
  return Fp16Round::apply(x, static_cast<int64_t>(mode_),
                          reinterpret_cast<int64_t>(status_));
}

}  // namespace lockstep
