#include "lockstep/torch/random_tensor.h"

#include <ATen/Functions.h>
#include <ATen/Parallel.h>

#include <limits>

#include "lockstep/core/check.h"
#include "lockstep/numerics/philox.h"

namespace lockstep {
namespace {

// Elements per parallel task; any chunking gives the same values.
constexpr int64_t kGrain = 1 << 15;

// Host tensor of `shape` and `dtype` filled by fill(start, n, out).
template <typename T, typename Fill>
at::Tensor HostFilled(c10::IntArrayRef shape, c10::ScalarType dtype,
                      const PhiloxStreamRef& s, Fill fill) {
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(dtype));
  int64_t n = t.numel();
  LOCKSTEP_CHECK(s.start <= std::numeric_limits<uint64_t>::max() -
                                static_cast<uint64_t>(n));
  T* out = t.data_ptr<T>();
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    fill(s.start + static_cast<uint64_t>(begin),
         static_cast<size_t>(end - begin), out + begin);
  });
  return t;
}

// Converts on the host, then copies to the requested device.
at::Tensor Finish(at::Tensor host, const c10::TensorOptions& options,
                  c10::ScalarType default_dtype) {
  LOCKSTEP_CHECK(options.layout() == c10::kStrided);
  c10::ScalarType dtype = options.has_dtype()
                              ? c10::typeMetaToScalarType(options.dtype())
                              : default_dtype;
  if (dtype != host.scalar_type()) host = host.to(dtype);
  if (options.device() == host.device()) return host;
  return host.to(options.device());
}

at::Tensor FloatStream(c10::IntArrayRef shape, const PhiloxStreamRef& s,
                       const c10::TensorOptions& options, bool normal) {
  if (options.has_dtype()) {
    LOCKSTEP_CHECK(
        c10::isFloatingType(c10::typeMetaToScalarType(options.dtype())));
  }
  at::Tensor host = HostFilled<float>(
      shape, at::kFloat, s, [&](uint64_t start, size_t n, float* out) {
        if (normal) {
          FillNormal(s.seed, s.offset, start, n, out);
        } else {
          FillUniform(s.seed, s.offset, start, n, out);
        }
      });
  return Finish(host, options, at::kFloat);
}

}  // namespace

at::Tensor PhiloxUniform(c10::IntArrayRef shape, const PhiloxStreamRef& s,
                         const c10::TensorOptions& options) {
  return FloatStream(shape, s, options, /*normal=*/false);
}

at::Tensor PhiloxNormal(c10::IntArrayRef shape, const PhiloxStreamRef& s,
                        const c10::TensorOptions& options) {
  return FloatStream(shape, s, options, /*normal=*/true);
}

at::Tensor PhiloxBernoulliMask(c10::IntArrayRef shape, double p,
                               const PhiloxStreamRef& s,
                               const c10::TensorOptions& options) {
  at::Tensor host = HostFilled<uint8_t>(
      shape, at::kByte, s, [&](uint64_t start, size_t n, uint8_t* out) {
        FillBernoulli(s.seed, s.offset, start, n, p, out);
      });
  return Finish(host, options, at::kBool);
}

}  // namespace lockstep
