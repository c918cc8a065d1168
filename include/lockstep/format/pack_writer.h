// PackWriter: writes a tensor pack (format in tensor_pack.h): tensors are
// appended as .npy bytes, one after another, and Finish() writes the index
// and footer. One file per rank dir and step instead of one per tensor, so
// that dumping tensors runs at the speed of sequential writes.
//
// A pack that is not finished has no footer, and readers refuse it with a
// message saying so. A failed Append (e.g. a full disk) truncates the file
// back to the entries before it, which stay valid; the failed tensor is
// missing from the index. The file is written through the Env current at
// Create (core/env.h).
//
// Thread safety: Append, Finish and Abandon may be called from any threads
// (they are serialized internally).
#ifndef LOCKSTEP_FORMAT_PACK_WRITER_H_
#define LOCKSTEP_FORMAT_PACK_WRITER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "lockstep/core/env.h"
#include "lockstep/core/status.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/tensor.h"
#include "lockstep/format/tensor_pack.h"

namespace lockstep {

class PackWriter {
 public:
  // Creates `path`, which must not exist (not even as a symbolic link), and
  // writes the pack's header. Errors: IoError naming the path.
  static StatusOr<std::unique_ptr<PackWriter>> Create(const std::string& path,
                                                      NpyWriteOptions npy = {});
  ~PackWriter();  // closes the file; unfinished, it stays without an index
  PackWriter(const PackWriter&) = delete;
  PackWriter& operator=(const PackWriter&) = delete;

  const std::string& path() const { return path_; }
  size_t entry_count() const;

  // Appends `t` as entry `name` (its data_name: "<stem>.npy"), encoded as
  // EncodeNpy(t, npy) would. Errors: InvalidArgument for a name that is
  // invalid (tensor_pack.h) or already in the pack, or after Finish/Abandon;
  // IoError from the file system (the file is cut back to the entries
  // before, so the pack stays valid without this one).
  Status Append(std::string_view name, const Tensor& t);

  // Writes the index and the footer and closes the file. Afterwards the
  // pack is complete; Append fails. Idempotent (returns the first result).
  Status Finish();

  // Closes and removes the file (a step whose tensors are dropped); returns
  // how many entries it held. Idempotent.
  size_t Abandon();

 private:
  PackWriter(Env* env, std::string path, int fd, NpyWriteOptions npy);
  Status WriteAt(const std::string_view* pieces, size_t n, uint64_t at);
  Status AppendLocked(std::string_view name, const Tensor& t);

  Env* const env_;
  const std::string path_;
  const NpyWriteOptions npy_;
  mutable std::mutex mu_;
  int fd_ = -1;
  uint64_t end_ = kPackHeaderSize;  // where the next entry may start
  std::vector<PackEntry> entries_;
  std::unordered_set<std::string> names_;
  bool closed_ = false;  // finished or abandoned
  bool abandoned_ = false;
  Status finish_status_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_PACK_WRITER_H_
