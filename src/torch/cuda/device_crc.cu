// The probe's CRC-32 kernel for CUDA tensors (device_stats.h): one launch
// per tensor, parts of equal length checked by the threads and merged in
// trees (numerics/crc32_tree.h, whose CPU model tests/format/
// crc32_tree_test checks against zlib).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "lockstep/numerics/crc32_tree.h"
#include "torch/device_stats.h"

namespace lockstep {
namespace {

using namespace crc32_tree;

// v[0, kThreads) merged in place into v[0]; every thread calls it. Returns
// the shift of the whole (kThreads groups of `shift`).
__device__ uint32_t BlockMerge(uint32_t* v, uint32_t shift) {
  const int t = threadIdx.x;
  for (int width = 1; width < kThreads; width *= 2) {
    if (t % (2 * width) == 0) v[t] = MergePair(v[t], v[t + width], shift);
    shift = MulMod(shift, shift);
    __syncthreads();
  }
  return shift;
}

// Loads the slicing tables into shared memory; every thread calls it.
__device__ __forceinline__ void LoadTables(uint32_t* table,
                                           const uint32_t* tables) {
  for (int i = threadIdx.x; i < kSlices * 256; i += kThreads) {
    table[i] = tables[i];
  }
}

// Up to kSmallBatch small tensors, one block each, by value.
struct SmallCrcBatch {
  const uint8_t* data[kSmallBatch];
  int32_t* out[kSmallBatch];
  int32_t bytes[kSmallBatch];
};

__global__ void __launch_bounds__(kThreads)
    SmallCrcKernel(SmallCrcBatch b, const uint32_t* __restrict__ tables) {
  __shared__ uint32_t table[kSlices * 256];
  __shared__ uint32_t v[kThreads];
  __shared__ uint32_t shift0;
  const int i = blockIdx.x;
  const Layout l = PlanLayout(b.bytes[i], 1, kSlices);
  LoadTables(table, tables);
  if (threadIdx.x == 0) shift0 = XPow8n(l.part);
  __syncthreads();
  v[threadIdx.x] = PartRaw(l, b.data[i], threadIdx.x, table);
  __syncthreads();
  BlockMerge(v, shift0);
  if (threadIdx.x == 0) *b.out[i] = static_cast<int32_t>(Finish(v[0], l.n));
}

__global__ void __launch_bounds__(kThreads)
    CrcKernel(const uint8_t* __restrict__ data, Layout l,
              const uint32_t* __restrict__ tables, uint32_t* partial,
              unsigned int* done, int32_t* out) {
  __shared__ uint32_t table[kSlices * 256];
  __shared__ uint32_t v[kThreads];
  __shared__ uint32_t shift0;
  __shared__ bool last;
  const int t = threadIdx.x;
  LoadTables(table, tables);
  if (t == 0) shift0 = XPow8n(l.part);
  __syncthreads();
  v[t] =
      PartRaw(l, data, static_cast<int64_t>(blockIdx.x) * kThreads + t, table);
  __syncthreads();
  const uint32_t block_shift = BlockMerge(v, shift0);
  if (gridDim.x == 1) {
    if (t == 0) out[0] = static_cast<int32_t>(Finish(v[0], l.n));
    return;
  }
  if (t == 0) {
    partial[blockIdx.x] = v[0];
    __threadfence();
    last = atomicAdd(done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  // The blocks' results, padded in front with zeros to q per thread.
  const int q = (l.blocks + kThreads - 1) / kThreads;
  const int missing = q * kThreads - l.blocks;
  uint32_t r = 0;
  for (int j = 0; j < q; ++j) {
    const int idx = t * q + j - missing;
    r = MergePair(r, idx >= 0 ? __ldcg(partial + idx) : 0u, block_shift);
  }
  v[t] = r;
  if (t == 0) shift0 = XPow8n(static_cast<uint64_t>(l.part) * kThreads * q);
  __syncthreads();
  BlockMerge(v, shift0);
  if (t == 0) {
    out[0] = static_cast<int32_t>(Finish(v[0], l.n));
    *done = 0;
  }
}

// Per device: the slicing tables; per device and stream: the blocks'
// results and the counter (launches on one stream run in turn).
struct CrcScratch {
  at::Tensor memory;
  uint32_t* partial = nullptr;
  unsigned int* done = nullptr;
};

const uint32_t* TablesOn(const at::Tensor& like) {
  static std::mutex mu;
  static auto* tables = new std::map<int, at::Tensor>;
  std::lock_guard<std::mutex> lock(mu);
  at::Tensor& t = (*tables)[like.get_device()];
  if (!t.defined()) {
    std::vector<uint32_t> host(kSlices * 256);
    FillTables(host.data());
    t = at::empty({kSlices * 256}, like.options().dtype(at::kInt));
    at::Tensor src = at::empty({kSlices * 256}, at::dtype(at::kInt));
    std::memcpy(src.data_ptr(), host.data(), host.size() * sizeof(uint32_t));
    t.copy_(src);
  }
  return reinterpret_cast<const uint32_t*>(t.data_ptr());
}

CrcScratch& CrcScratchFor(const at::Tensor& like, int max_blocks) {
  static std::mutex mu;
  static auto* all = new std::map<std::pair<int, int64_t>, CrcScratch>;
  std::lock_guard<std::mutex> lock(mu);
  c10::cuda::CUDAStream stream = at::cuda::getCurrentCUDAStream();
  CrcScratch& s =
      (*all)[{like.get_device(), static_cast<int64_t>(stream.id())}];
  if (!s.memory.defined()) {
    s.memory = at::zeros({max_blocks + 1}, like.options().dtype(at::kInt));
    s.partial = reinterpret_cast<uint32_t*>(s.memory.data_ptr());
    s.done = reinterpret_cast<unsigned int*>(s.partial + max_blocks);
  }
  return s;
}

}  // namespace

bool DeviceCrcSupported(const at::Tensor& t) {
  return t.defined() && t.is_cuda() && t.numel() > 0 && t.has_storage();
}

void LaunchDeviceCrc(const at::Tensor& t, const at::Tensor& out,
                     int64_t index) {
  c10::cuda::CUDAGuard guard(t.device());
  // The bytes of the dense row-major copy, as the host path reads them.
  at::Tensor x = t.is_contiguous() ? t : t.contiguous();
  const int max_blocks =
      4 * at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  const Layout l = PlanLayout(static_cast<int64_t>(x.nbytes()), max_blocks);
  const uint32_t* tables = TablesOn(x);
  uint32_t* partial = nullptr;
  unsigned int* done = nullptr;
  if (l.blocks > 1) {
    CrcScratch& s = CrcScratchFor(x, max_blocks);
    partial = s.partial;
    done = s.done;
  }
  CrcKernel<<<l.blocks, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      static_cast<const uint8_t*>(x.const_data_ptr()), l, tables, partial, done,
      out.data_ptr<int32_t>() + index);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void LaunchSmallDeviceCrcs(const at::Tensor* tensors, int32_t* const* outs,
                           int count) {
  TORCH_CHECK(count > 0 && count <= kSmallBatch,
              "lockstep device CRC-32: a batch of ", count);
  c10::cuda::CUDAGuard guard(tensors[0].device());
  SmallCrcBatch b;
  for (int i = 0; i < count; ++i) {
    const at::Tensor& t = tensors[i];
    TORCH_CHECK(t.is_contiguous() &&
                    static_cast<int64_t>(t.nbytes()) <= kSmallCrcBytes &&
                    t.device() == tensors[0].device(),
                "lockstep device CRC-32: not a small dense tensor");
    b.data[i] = static_cast<const uint8_t*>(t.const_data_ptr());
    b.out[i] = outs[i];
    b.bytes[i] = static_cast<int32_t>(t.nbytes());
  }
  SmallCrcKernel<<<count, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
      b, TablesOn(tensors[0]));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace lockstep
