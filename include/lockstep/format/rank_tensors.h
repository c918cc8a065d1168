// Where one rank dir's tensors are read from: dump_tensor_data/ (msprobe's
// layout, one file per tensor) or, when that directory is absent,
// dump_tensor_data.pack (tensor_pack.h). Readers (compare, export) ask for
// a tensor by its dump.json data_name either way.
// Thread safety: immutable after Open; Read may run on many threads.
#ifndef LOCKSTEP_FORMAT_RANK_TENSORS_H_
#define LOCKSTEP_FORMAT_RANK_TENSORS_H_

#include <functional>
#include <memory>
#include <string>

#include "lockstep/core/status.h"
#include "lockstep/format/tensor.h"
#include "lockstep/format/tensor_pack.h"

namespace lockstep {

// Reads a tensor file of msprobe's layout (ReadTensorFile, or a test's).
using TensorFileLoader = std::function<StatusOr<Tensor>(const std::string&)>;

class RankTensors {
 public:
  // Looks at `rank_dir`. When it holds no dump_tensor_data/ but a pack, the
  // pack is opened and its index checked now; if that fails, every Read
  // returns that error.
  static RankTensors Open(const std::string& rank_dir);

  bool packed() const { return packed_; }
  // The open pack, or null (msprobe's layout, or the pack is unreadable).
  const PackReader* pack() const { return pack_.get(); }
  // Ok, or why the pack could not be opened.
  const Status& pack_status() const { return pack_status_; }

  // Tensor `data_name`: the pack's entry, or the file ResolveTensorPath
  // (tensor_file.h) gives, read with `load`. *where receives what to name in
  // a message: the file, or "<pack>: entry '<data_name>'".
  StatusOr<Tensor> Read(const std::string& data_name,
                        const TensorFileLoader& load, std::string* where) const;

 private:
  std::string dir_;
  bool packed_ = false;
  std::shared_ptr<const PackReader> pack_;
  Status pack_status_;
};

// The pack of `rank_dir` when it is where its tensors are read from: true
// when there is no dump_tensor_data/ there (not even as a link) and
// dump_tensor_data.pack exists (whatever it is: opening it decides).
bool RankUsesPack(const std::string& rank_dir);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_RANK_TENSORS_H_
