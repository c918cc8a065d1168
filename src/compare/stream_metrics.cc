#include "lockstep/compare/stream_metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "lockstep/core/parallel.h"
#include "lockstep/format/crc32.h"

namespace lockstep {
namespace {

// An open file descriptor, closed on destruction.
class Fd {
 public:
  explicit Fd(const std::string& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads exactly `n` bytes at `offset`.
Status ReadExactly(int fd, const std::string& path, uint64_t offset, size_t n,
                   std::byte* out) {
  size_t done = 0;
  while (done < n) {
    ssize_t r =
        ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      return Status::IoError(
          path, r < 0 ? std::strerror(errno) : "file shorter than its tensor");
    }
    done += static_cast<size_t>(r);
  }
  return Status::Ok();
}

struct Side {
  const Tensor* t;
  size_t elem;
};

// The CRC-32 of each chunk of each side (empty for a side not checked).
struct ChunkCrcs {
  std::vector<uint32_t> a, b;
};

// Computes chunks [first, last) into parts[first..last) and their CRC-32s
// into crcs.
Status RunChunks(const Side& a, const Side& b, int64_t n, size_t first,
                 size_t last, std::vector<PairMetrics>* parts,
                 ChunkCrcs* crcs) {
  const Tensor::FileRegion& ra = *a.t->file_region();
  const Tensor::FileRegion& rb = *b.t->file_region();
  Fd fa(ra.path), fb(rb.path);
  if (fa.get() < 0) return Status::IoError(ra.path, std::strerror(errno));
  if (fb.get() < 0) return Status::IoError(rb.path, std::strerror(errno));
  std::vector<std::byte> ba(kStreamChunkElements * a.elem);
  std::vector<std::byte> bb(kStreamChunkElements * b.elem);
  for (size_t c = first; c < last; ++c) {
    int64_t begin = static_cast<int64_t>(c) * kStreamChunkElements;
    int64_t count = std::min(kStreamChunkElements, n - begin);
    size_t na = static_cast<size_t>(count) * a.elem;
    size_t nb = static_cast<size_t>(count) * b.elem;
    LOCKSTEP_RETURN_IF_ERROR(ReadExactly(
        fa.get(), ra.path, ra.offset + begin * a.elem, na, ba.data()));
    LOCKSTEP_RETURN_IF_ERROR(ReadExactly(
        fb.get(), rb.path, rb.offset + begin * b.elem, nb, bb.data()));
    if (!crcs->a.empty())
      crcs->a[c] =
          Crc32(std::string_view(reinterpret_cast<const char*>(ba.data()), na));
    if (!crcs->b.empty())
      crcs->b[c] =
          Crc32(std::string_view(reinterpret_cast<const char*>(bb.data()), nb));
    (*parts)[c] = ComputePairMetrics(a.t->dtype(), ba.data(), b.t->dtype(),
                                     bb.data(), static_cast<size_t>(count), 1);
  }
  return Status::Ok();
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
  Side sa{&a, DTypeSize(a.dtype())}, sb{&b, DTypeSize(b.dtype())};
  const size_t workers = std::clamp<size_t>(static_cast<size_t>(threads), 1,
                                            std::max<size_t>(chunks, 1));
  const size_t per = (chunks + workers - 1) / std::max<size_t>(workers, 1);
  std::mutex mu;
  Status first_error;
  ParallelForRange(chunks, std::max<size_t>(per, 1), static_cast<int>(workers),
                   [&](size_t lo, size_t hi) {
                     Status s = RunChunks(sa, sb, n, lo, hi, &parts, &crcs);
                     if (s.ok()) return;
                     std::lock_guard<std::mutex> lock(mu);
                     if (first_error.ok()) first_error = s;
                   });
  LOCKSTEP_RETURN_IF_ERROR(first_error);
  LOCKSTEP_RETURN_IF_ERROR(CheckCrc(a, sa.elem, n, crcs.a));
  LOCKSTEP_RETURN_IF_ERROR(CheckCrc(b, sb.elem, n, crcs.b));
  PairMetrics total;
  for (const PairMetrics& p : parts) MergePairMetrics(p, &total);
  return total;
}

}  // namespace lockstep
