#include "lockstep/compare/stream_metrics.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/core/parallel.h"
#include "lockstep/format/crc32.h"

namespace lockstep {
namespace {

// One side of the pair: its tensor, element size and file, mapped.
struct Side {
  const Tensor* t;
  size_t elem;
  std::shared_ptr<const MappedFile> file;
  const std::byte* bytes = nullptr;  // the tensor's first byte in the map
};

// The CRC-32 of each chunk of each side (empty for a side not checked).
struct ChunkCrcs {
  std::vector<uint32_t> a, b;
};

// Maps the file of `side`'s tensor again (lazily). MappedFile::Open's errors,
// or IoError naming it when it is now shorter than the tensor (replaced
// since the tensor was read).
Status MapSide(Side* side) {
  const Tensor::FileRegion& r = *side->t->file_region();
  StatusOr<std::shared_ptr<const MappedFile>> f =
      MappedFile::Open(r.path, /*populate=*/false, /*regular_only=*/true);
  if (!f.ok()) return f.status();
  const uint64_t need = r.offset + side->t->nbytes();
  if ((*f)->size() < need || need < r.offset)
    return Status::IoError(r.path, "file shorter than its tensor");
  side->file = std::move(*f);
  side->bytes = side->file->data() + r.offset;
  return Status::Ok();
}

// Drops the pages a thread has read from this process's map (they stay in
// the page cache), so that memory use stays at a few chunks however large
// the file. In aligned 2 MiB blocks, at least 8 MiB at a time: each call
// flushes the TLB of every core running this process (a plain read of the
// map, 2 threads, Linux 6.18: 25 GB/s dropping 1 MiB at a time, 35 GB/s at
// 8 MiB). Only blocks wholly inside what the thread read: a neighbour may
// be reading the next one.
class Releaser {
 public:
  Releaser(const Side& s, size_t from) : s_(s), done_(from) {}
  // The thread has read the side's bytes up to `end`; `last`: all of them.
  void ReadUpTo(size_t end, bool last) {
    if (!s_.file->mapped()) return;  // a heap copy: never madvise it
    if (!last && end - done_ < kAtLeast) return;
    uintptr_t a = reinterpret_cast<uintptr_t>(s_.bytes + done_);
    uintptr_t b = reinterpret_cast<uintptr_t>(s_.bytes + end);
    a = (a + kBlock - 1) & ~(kBlock - 1);
    b &= ~(kBlock - 1);
    if (b > a) ::madvise(reinterpret_cast<void*>(a), b - a, MADV_DONTNEED);
    done_ = std::max(
        done_, static_cast<size_t>(b - reinterpret_cast<uintptr_t>(s_.bytes)));
  }

 private:
  static constexpr uintptr_t kBlock = uintptr_t{2} << 20;
  static constexpr size_t kAtLeast = size_t{8} << 20;
  const Side& s_;
  size_t done_;  // bytes before this are released (or not this thread's)
};

// Computes chunks [first, last) into parts[first..last) and their CRC-32s
// into crcs.
void RunChunks(const Side& a, const Side& b, int64_t n, size_t first,
               size_t last, std::vector<PairMetrics>* parts, ChunkCrcs* crcs) {
  const size_t first_element =
      first * static_cast<size_t>(kStreamChunkElements);
  Releaser ra(a, first_element * a.elem), rb(b, first_element * b.elem);
  for (size_t c = first; c < last; ++c) {
    int64_t begin = static_cast<int64_t>(c) * kStreamChunkElements;
    int64_t count = std::min(kStreamChunkElements, n - begin);
    const size_t at = static_cast<size_t>(begin),
                 k = static_cast<size_t>(count);
    const size_t oa = at * a.elem, na = k * a.elem;
    const size_t ob = at * b.elem, nb = k * b.elem;
    const std::byte* pa = a.bytes + oa;
    const std::byte* pb = b.bytes + ob;
    if (!crcs->a.empty())
      crcs->a[c] =
          Crc32(std::string_view(reinterpret_cast<const char*>(pa), na));
    if (!crcs->b.empty())
      crcs->b[c] =
          Crc32(std::string_view(reinterpret_cast<const char*>(pb), nb));
    (*parts)[c] = ComputePairMetrics(a.t->dtype(), pa, b.t->dtype(), pb, k, 1);
    ra.ReadUpTo(oa + na, c + 1 == last);
    rb.ReadUpTo(ob + nb, c + 1 == last);
  }
}

// Merges the chunk CRC-32s of `t` (none: nothing to check) and compares
// them with what its file records.
Status CheckCrc(const Tensor& t, size_t elem, int64_t n,
                const std::vector<uint32_t>& chunk_crcs) {
  if (chunk_crcs.empty()) return Status::Ok();
  uint32_t crc = 0;
  for (size_t c = 0; c < chunk_crcs.size(); ++c) {
    int64_t begin = static_cast<int64_t>(c) * kStreamChunkElements;
    int64_t count = std::min(kStreamChunkElements, n - begin);
    crc = Crc32Combine(crc, chunk_crcs[c], static_cast<uint64_t>(count) * elem);
  }
  if (crc == *t.unverified_crc32()) return Status::Ok();
  char msg[96];
  std::snprintf(msg, sizeof msg,
                "the tensor's bytes have CRC-32 %08x, the file records %08x",
                crc, *t.unverified_crc32());
  return Status::Corruption(t.file_region()->path, msg);
}

}  // namespace

StatusOr<PairMetrics> StreamPairMetrics(const Tensor& a, const Tensor& b,
                                        int threads) {
  const int64_t n = a.numel();
  const size_t chunks = static_cast<size_t>((n + kStreamChunkElements - 1) /
                                            kStreamChunkElements);
  std::vector<PairMetrics> parts(chunks);
  ChunkCrcs crcs;
  if (a.unverified_crc32()) crcs.a.resize(chunks);
  if (b.unverified_crc32()) crcs.b.resize(chunks);
  Side sa{&a, DTypeSize(a.dtype()), nullptr},
      sb{&b, DTypeSize(b.dtype()), nullptr};
  LOCKSTEP_RETURN_IF_ERROR(MapSide(&sa));
  LOCKSTEP_RETURN_IF_ERROR(MapSide(&sb));
  const size_t workers = std::clamp<size_t>(static_cast<size_t>(threads), 1,
                                            std::max<size_t>(chunks, 1));
  const size_t per = (chunks + workers - 1) / std::max<size_t>(workers, 1);
  ParallelForRange(chunks, std::max<size_t>(per, 1), static_cast<int>(workers),
                   [&](size_t lo, size_t hi) {
                     RunChunks(sa, sb, n, lo, hi, &parts, &crcs);
                   });
  // A file truncated while it was read gave zeros past its new end.
  LOCKSTEP_RETURN_IF_ERROR(sa.file->CheckIntact());
  LOCKSTEP_RETURN_IF_ERROR(sb.file->CheckIntact());
  LOCKSTEP_RETURN_IF_ERROR(CheckCrc(a, sa.elem, n, crcs.a));
  LOCKSTEP_RETURN_IF_ERROR(CheckCrc(b, sb.elem, n, crcs.b));
  PairMetrics total;
  for (const PairMetrics& p : parts) MergePairMetrics(p, &total);
  return total;
}

}  // namespace lockstep
