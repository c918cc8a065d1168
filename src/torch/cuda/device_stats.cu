// The probe's one-pass statistics kernel for CUDA tensors (device_stats.h).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "torch/device_stats.h"

namespace lockstep {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
// Elements a thread takes in before a second block is worth launching.
constexpr int64_t kPerThread = 32;

struct Acc {
  double sum;
  double sq;
  float max;
  float min;
};

__device__ __forceinline__ Acc Empty() {
  return Acc{0.0, 0.0, -INFINITY, INFINITY};
}

// NaN sticks: once max or min is NaN, no later comparison replaces it.
__device__ __forceinline__ float Bigger(float a, float b) {
  return (b > a || b != b) ? b : a;
}
__device__ __forceinline__ float Smaller(float a, float b) {
  return (b < a || b != b) ? b : a;
}

__device__ __forceinline__ void Add(Acc& a, float v) {
  a.max = Bigger(a.max, v);
  a.min = Smaller(a.min, v);
  const double d = v;
  a.sum += d;
  a.sq = fma(d, d, a.sq);
}

__device__ __forceinline__ void Merge(Acc& a, const Acc& b) {
  a.max = Bigger(a.max, b.max);
  a.min = Smaller(a.min, b.min);
  a.sum += b.sum;
  a.sq += b.sq;
}

// The block's total, in thread 0: a fixed tree (shuffles, then the warps'
// results in order), so the same inputs give the same bits.
__device__ Acc BlockTotal(Acc a) {
  for (int off = 16; off > 0; off /= 2) {
    Acc o;
    o.sum = __shfl_down_sync(0xffffffffu, a.sum, off);
    o.sq = __shfl_down_sync(0xffffffffu, a.sq, off);
    o.max = __shfl_down_sync(0xffffffffu, a.max, off);
    o.min = __shfl_down_sync(0xffffffffu, a.min, off);
    Merge(a, o);
  }
  __shared__ Acc warps[kWarps];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  if (lane == 0) warps[warp] = a;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w) Merge(a, warps[w]);
  }
  return a;
}

__device__ __forceinline__ void Store(const Acc& a, double* out) {
  out[0] = a.max;
  out[1] = a.min;
  out[2] = a.sum;
  out[3] = a.sq;
}

// Loads another block's partial past the (non-coherent) L1 cache.
__device__ __forceinline__ Acc LoadPartial(const Acc* p) {
  return Acc{__ldcg(&p->sum), __ldcg(&p->sq), __ldcg(&p->max), __ldcg(&p->min)};
}

// One launch per tensor: each block's total goes to partial[blockIdx.x];
// the block that finishes last (counted in *done, which it sets back to 0
// for the next launch on this stream) adds them up in index order and
// writes out. A grid of one block writes out directly.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    StatsKernel(const T* __restrict__ x, int64_t n, Acc* partial,
                unsigned int* done, double* out) {
  Acc a = Empty();
  const int64_t first =
      static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  constexpr int kVec = 16 / sizeof(T);
  int64_t covered = 0;
  if (reinterpret_cast<uintptr_t>(x) % 16 == 0) {
    // 16-byte loads, coalesced across the warp.
    const int64_t vectors = n / kVec;
    const uint4* xv = reinterpret_cast<const uint4*>(x);
    for (int64_t i = first; i < vectors; i += stride) {
      uint4 raw = __ldg(xv + i);
      T v[kVec];
      memcpy(v, &raw, sizeof(raw));
#pragma unroll
      for (int k = 0; k < kVec; ++k) Add(a, static_cast<float>(v[k]));
    }
    covered = vectors * kVec;
  }
  for (int64_t i = covered + first; i < n; i += stride) {
    Add(a, static_cast<float>(x[i]));
  }
  a = BlockTotal(a);
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) Store(a, out);
    return;
  }
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = a;
    __threadfence();
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  Acc total = Empty();
  for (int i = threadIdx.x; i < static_cast<int>(gridDim.x); i += kThreads) {
    Merge(total, LoadPartial(partial + i));
  }
  total = BlockTotal(total);
  if (threadIdx.x == 0) {
    Store(total, out);
    *done = 0;
  }
}

// Up to kSmallBatch small tensors, one block each (blockIdx.x), passed by
// value as the kernel's parameters (about 1.3 KB).
struct SmallBatch {
  const void* data[kSmallBatch];
  double* out[kSmallBatch];
  int32_t n[kSmallBatch];
  int8_t dtype[kSmallBatch];  // 0 float, 1 half, 2 bfloat16
};

template <typename T>
__device__ __forceinline__ void AddAll(const T* __restrict__ x, int32_t n,
                                       Acc& a) {
  for (int32_t i = threadIdx.x; i < n; i += kThreads) {
    Add(a, static_cast<float>(x[i]));
  }
}

__global__ void __launch_bounds__(kThreads) SmallStatsKernel(SmallBatch b) {
  const int i = blockIdx.x;
  Acc a = Empty();
  switch (b.dtype[i]) {
    case 0:
      AddAll(static_cast<const float*>(b.data[i]), b.n[i], a);
      break;
    case 1:
      AddAll(static_cast<const c10::Half*>(b.data[i]), b.n[i], a);
      break;
    default:
      AddAll(static_cast<const c10::BFloat16*>(b.data[i]), b.n[i], a);
      break;
  }
  a = BlockTotal(a);
  if (threadIdx.x == 0) Store(a, b.out[i]);
}

// Per device and stream: room for every block's partial and the counter.
// Launches on one stream run one after another, so they share it; it lives
// as long as the process (a few KB per stream).
struct Scratch {
  at::Tensor memory;
  Acc* partial = nullptr;
  unsigned int* done = nullptr;
};

Scratch& ScratchFor(const at::Tensor& x, int max_blocks) {
  static std::mutex mu;
  static std::map<std::pair<int, int64_t>, Scratch>* all =
      new std::map<std::pair<int, int64_t>, Scratch>;
  std::lock_guard<std::mutex> lock(mu);
  c10::cuda::CUDAStream stream = at::cuda::getCurrentCUDAStream();
  Scratch& s = (*all)[{x.get_device(), static_cast<int64_t>(stream.id())}];
  if (!s.memory.defined()) {
    const int64_t bytes = max_blocks * sizeof(Acc) + sizeof(unsigned int);
    s.memory = at::zeros({bytes}, x.options().dtype(at::kByte));
    s.partial = reinterpret_cast<Acc*>(s.memory.data_ptr());
    s.done = reinterpret_cast<unsigned int*>(s.memory.data_ptr<uint8_t>() +
                                             max_blocks * sizeof(Acc));
  }
  return s;
}

template <typename T>
void Launch(const at::Tensor& x, double* out) {
  const int64_t n = x.numel();
  const int max_blocks =
      4 * at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  const int64_t wanted =
      (n + kThreads * kPerThread - 1) / (kThreads * kPerThread);
  const int blocks = static_cast<int>(std::min<int64_t>(wanted, max_blocks));
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const T* data = static_cast<const T*>(x.const_data_ptr());
  Acc* partial = nullptr;
  unsigned int* done = nullptr;
  if (blocks > 1) {
    Scratch& s = ScratchFor(x, max_blocks);
    partial = s.partial;
    done = s.done;
  }
  StatsKernel<T><<<blocks, kThreads, 0, stream>>>(data, n, partial, done, out);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace

bool DeviceKernelsWanted() {
  const char* v = std::getenv("LOCKSTEP_DEVICE_KERNELS");
  return v == nullptr || std::strcmp(v, "0") != 0;
}

bool DeviceStatsSupported(const at::Tensor& t) {
  if (!t.defined() || !t.is_cuda() || t.numel() == 0) {
    return false;
  }
  switch (t.scalar_type()) {
    case at::kFloat:
    case at::kHalf:
    case at::kBFloat16:
      return true;
    default:
      return false;
  }
}

void LaunchDeviceStats(const at::Tensor& t, const at::Tensor& out,
                       int64_t index) {
  c10::cuda::CUDAGuard guard(t.device());
  // A view with gaps or another order is made dense first (a copy on the
  // device); dense tensors are read in place.
  at::Tensor x = t.is_contiguous() ? t : t.contiguous();
  double* slot = out.data_ptr<double>() + 4 * index;
  switch (x.scalar_type()) {
    case at::kFloat:
      return Launch<float>(x, slot);
    case at::kHalf:
      return Launch<c10::Half>(x, slot);
    case at::kBFloat16:
      return Launch<c10::BFloat16>(x, slot);
    default:
      TORCH_CHECK(false, "lockstep device statistics: dtype ", x.scalar_type(),
                  " is not supported");
  }
}

void LaunchSmallDeviceStats(const at::Tensor* tensors, double* const* outs,
                            int count) {
  TORCH_CHECK(count > 0 && count <= kSmallBatch,
              "lockstep device statistics: a batch of ", count);
  c10::cuda::CUDAGuard guard(tensors[0].device());
  SmallBatch b;
  for (int i = 0; i < count; ++i) {
    const at::Tensor& t = tensors[i];
    TORCH_CHECK(t.is_contiguous() && t.numel() <= kSmallStatsElements &&
                    t.device() == tensors[0].device(),
                "lockstep device statistics: not a small dense tensor");
    b.data[i] = t.const_data_ptr();
    b.out[i] = outs[i];
    b.n[i] = static_cast<int32_t>(t.numel());
    b.dtype[i] = t.scalar_type() == at::kFloat  ? 0
                 : t.scalar_type() == at::kHalf ? 1
                                                : 2;
  }
  SmallStatsKernel<<<count, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(b);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void DeviceStatsSynchronize(const c10::Device& device) {
  c10::cuda::CUDAGuard guard(device);
  c10::cuda::device_synchronize();
}

}  // namespace lockstep
