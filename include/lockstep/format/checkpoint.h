// Reading a model checkpoint as a flat list of named values, without
// LibTorch: a torch.save'd state_dict or training checkpoint (ZIP format,
// torch >= 1.6; pt_reader.h), a safetensors file (safetensors.h), or a
// directory of shards of either.
//
// Names: nested dicts are flattened with ".", as torch's state_dict names
// parameters: {"model": {"fc.weight": t}, "epoch": 3} gives "model.fc.weight"
// and "epoch"; a dict key that is not a string is written as Python's str()
// ({0: {"exp_avg": t}} gives "0.exp_avg"); a list or tuple that holds a
// tensor, dict, list or tuple is flattened by index ("param_groups.0.lr"),
// other lists and tuples are one value ("betas" = [0.9, 0.999]).
// Every tensor views its storage with its own offset and strides, so tensors
// that share a storage (tied weights, slices of one buffer) read as torch
// reads them.
//
// Thread safety: the functions are reentrant; a Checkpoint is a plain value
// whose Tensors are immutable and keep their files mapped.
#ifndef LOCKSTEP_FORMAT_CHECKPOINT_H_
#define LOCKSTEP_FORMAT_CHECKPOINT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/pickle.h"
#include "lockstep/format/pt_reader.h"
#include "lockstep/format/pyvalue.h"
#include "lockstep/format/tensor.h"

namespace lockstep {

// One named leaf of a checkpoint: a tensor, or another value (an int, a
// float, a string, None, a list of them) kept as Python would print it.
struct CheckpointEntry {
  std::string name;  // "model.fc.weight"
  bool is_tensor = false;
  Tensor tensor;  // when is_tensor
  // When !is_tensor: the value (a tuple becomes a list; an object lockstep
  // cannot type, such as a class instance, is a str holding its repr).
  PyValue value;
  // When !is_tensor: Python's type name ("int", "float", "str", "NoneType",
  // "bool", "list", or the class of an object: "argparse.Namespace").
  std::string type_name;
};

struct Checkpoint {
  std::string path;
  std::string format;                    // "torch.save", "safetensors"
  std::vector<CheckpointEntry> entries;  // in file order
  // safetensors "__metadata__" (str -> str), as a dict; None when absent.
  PyValue metadata;
};

// What a path holds, judged by content, not by name.
enum class CheckpointKind {
  kNone,         // not a checkpoint (a dump.json, a dump directory, ...)
  kTorchZip,     // a ZIP archive (torch.save, torch >= 1.6)
  kTorchLegacy,  // torch.save's legacy pickle or tar format: not supported
  kSafetensors,  // 8-byte header length, then a JSON object
  kShardDir,     // a directory of *.safetensors or torch.save files
};

// Looks at the first bytes of a regular file, or at the names in a
// directory: a directory is a shard directory when it holds a
// *.index.json, *.safetensors, *.pt, *.pth or *.bin file and no dump.json,
// step* or rank* entry. Never fails: what cannot be read is kNone.
CheckpointKind DetectCheckpoint(const std::string& path);

// Reads the checkpoint at `path`, whatever DetectCheckpoint says it is.
// Shard directories: a model.safetensors.index.json or
// pytorch_model.bin.index.json ("weight_map": name -> file) names the files
// and every name must be in the file it names; without one, every
// *.safetensors (else every *.pt, *.pth, *.bin) file is read, in name order.
// A name in two shards is an error. Errors name the file and the thing:
// NotSupported for the legacy torch format (with how to re-save it) and for
// objects lockstep cannot read (a sparse or quantized tensor);
// Corruption for malformed files; InvalidArgument for a path that is not a
// checkpoint.
StatusOr<Checkpoint> ReadCheckpoint(const std::string& path);

// The torch.save file in `bytes` (`owner` keeps them alive, as for
// ReadPtTensorFromMemory; `name` stands for the path in messages). Each
// tensor is read with `options` (pt_reader.h).
StatusOr<Checkpoint> ReadTorchCheckpoint(std::string_view bytes,
                                         std::shared_ptr<const void> owner,
                                         const std::string& name,
                                         const PtReadOptions& options = {});

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_CHECKPOINT_H_
