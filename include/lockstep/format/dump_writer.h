// Writing dumps in msprobe's layout (docs/msprobe_reference.md §2), readable by
// msprobe's compare and by lockstep's readers: one DumpWriter per rank dir
// of one step,
//
//   {rank_dir}/dump.json                     json.dump(..., indent=1) bytes
//             /stack.json                    HEAD format, stacks shared
//             /construct.json                {name: parent}
//             /dump_tensor_data/<stem>.npy   numpy.save bytes, or
//             /dump_tensor_data/<stem>.pt    torch.save bytes (tensor_file)
//   or, with DumpWriterOptions::pack_tensors,
//             /dump_tensor_data.pack         the .npy bytes, one file
//                                            (format/tensor_pack.h)
//
// Each entry is serialized once, when it is added; Flush() writes dump.json
// from those pieces to a temporary file and renames it over the old one, so
// a reader (or a crash) never sees a half-written dump.json, and flushing
// at every step boundary costs one write of the file, no re-encoding.
//
// Thread safety: not thread-safe; use one writer from one thread at a time
// (different writers, for different rank dirs, may run in parallel).
#ifndef LOCKSTEP_FORMAT_DUMP_WRITER_H_
#define LOCKSTEP_FORMAT_DUMP_WRITER_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/dump.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/pack_writer.h"
#include "lockstep/format/pyvalue.h"
#include "lockstep/format/tensor.h"
#include "lockstep/format/tensor_file.h"

namespace lockstep {

// The dump.json text of `dump`, as Python's json.dump(obj, f, indent=1)
// writes obj = {"task", "level", "framework" (only if framework_given),
// "dump_data_dir" (null when ""), the extra keys, "data"}. For a dump.json
// that msprobe wrote in that order the result is byte-identical to the file.
std::string EncodeDumpJson(const DumpFile& dump);

// Writes EncodeDumpJson(dump) to `path` atomically.
Status WriteDumpJson(const std::string& path, const DumpFile& dump);

struct DumpWriterOptions {
  std::string task = "tensor";  // msprobe's task names
  std::string level = "mix";
  std::string framework = "pytorch";  // "" leaves the key out (old dumps)
  bool write_stack_json = true;       // as msprobe with extra_info
  bool write_construct_json = true;
  // The rank directory is made when first needed (Flush, TensorTargetFor)
  // instead of by Create: a writer whose files are written on another
  // thread leaves that file system work to it too.
  bool make_dir_lazily = false;
  // The dump root the rank directory lies under, or "": directories below
  // it are made without following symbolic links (CreateDirsUnder).
  std::string root;
  NpyWriteOptions npy;
  // The format of the tensor files (the probe picks kPt, which msprobe's
  // PyTorch compare reads; this writer's default stays .npy).
  TensorFileFormat tensor_file = TensorFileFormat::kNpy;
  // Tensors go into one dump_tensor_data.pack (format/tensor_pack.h), as
  // .npy bytes, instead of one file each; Flush finishes the pack.
  bool pack_tensors = false;
};

class DumpWriter {
 public:
  // A writer for `rank_dir` (created with its parents if missing).
  // Errors: IoError when the directory cannot be created.
  static StatusOr<std::unique_ptr<DumpWriter>> Create(
      const std::string& rank_dir, DumpWriterOptions options = {});

  // A pack not finished by Flush is removed: no dump.json names it.
  ~DumpWriter();
  DumpWriter(const DumpWriter&) = delete;
  DumpWriter& operator=(const DumpWriter&) = delete;

  const std::string& dir() const { return dir_; }
  size_t entry_count() const { return index_.size(); }

  // Adds entry `name` at the end of "data". If `name` is already there, it
  // is removed from its old place first, as msprobe does when a module's
  // forward output arrives (DataWriter.update_data: pop, then insert).
  // `value` is normally a dict (input_args, input_kwargs, output, ...).
  void AddEntry(const std::string& name, const PyValue& value);
  // The same with the value already encoded: JSON text as AppendPyJson
  // writes it at level kEntryLevel (a PyJsonBuilder(kEntryLevel)'s text),
  // where late floats (json_writer.h) may stand for floats: they are
  // formatted when dump.json is written.
  void AddEncodedEntry(const std::string& name, std::string value_text);
  static constexpr int kEntryLevel = 2;

  // Saves `t` as dump_tensor_data/<stem>.npy or <stem>.pt (atomically;
  // options.tensor_file), or appends it to the pack as "<stem>.npy", and
  // returns its "data_name", the file name.
  // `stem` is msprobe's name, e.g. "Functional.linear.0.forward.input.0".
  // Errors: InvalidArgument when stem is empty, ".", "..", or has a '/' or
  // NUL, or (packed) after Flush; IoError from the filesystem; NotSupported
  // for a .pt of uint16/32/64 (format/pt_writer.h).
  StatusOr<std::string> SaveTensor(std::string_view stem, const Tensor& t);

  // Where SaveTensor would put the tensor of `stem`, for a caller that
  // writes it itself (e.g. on a BackgroundWriter): a file path, or the open
  // pack (created with dump_tensor_data.pack when first asked for) and the
  // entry name. Creates dump_tensor_data/ (or the pack) and makes dump.json
  // name it. Errors: as SaveTensor.
  struct TensorTarget {
    std::string path;                  // "" when packed; WriteTensorFile it
    std::shared_ptr<PackWriter> pack;  // null unless packed
    std::string data_name;             // "<stem>.pt" or "<stem>.npy"
  };
  StatusOr<TensorTarget> TensorTargetFor(std::string_view stem);

  // Drops the tensors saved so far (a step whose dump.json must fit on a
  // full disk): removes the files under dump_tensor_data/ and the directory,
  // or abandons the pack; returns how many tensors went. Tensors saved
  // afterwards fail (packed) or start afresh (files).
  size_t RemoveTensors();

  // Records the call stack of entry `name` (stack.json). Names with
  // identical frames share one stack, in first-seen order, as msprobe HEAD
  // writes it. A name recorded twice keeps its first stack.
  void AddStack(const std::string& name,
                const std::vector<std::string>& frames);
  // Records that entry `name` has the stack of `same_as` (recorded before
  // with AddStack): no frames compared. Does nothing when `same_as` has no
  // stack or `name` has one.
  void AddStackOf(const std::string& name, const std::string& same_as);

  // Records entry `name`'s parent module in construct.json (a str, None,
  // or [parent, micro_step]); a second call replaces the value in place.
  void SetParent(const std::string& name, const PyValue& parent);

  // Sets a top-level dump.json key written between "dump_data_dir" and
  // "data" (msprobe's readers ignore keys they do not know), replacing an
  // earlier value of the same key. The probe writes "skipped" this way.
  void SetExtra(const std::string& key, PyValue value);

  // The dump.json text that Flush() writes now.
  std::string DumpJsonText() const;

  // Finishes the pack (packed: REQUIRES every tensor of it appended), then
  // writes dump.json, and stack.json / construct.json if they changed since
  // the last flush (or were never written), each atomically.
  Status Flush();

 private:
  struct Piece {
    std::string name;
    std::string value;  // its text at nesting level kEntryLevel
    bool live = true;
  };
  struct StackGroup {
    std::vector<std::string> names;
    std::vector<std::string> frames;
  };

  DumpWriter(std::string dir, DumpWriterOptions options);
  std::string StackJsonText() const;
  std::string ConstructJsonText() const;

  std::string dir_;
  DumpWriterOptions options_;
  bool saved_tensors_ = false;
  std::shared_ptr<PackWriter> pack_;
  std::vector<Piece> pieces_;
  std::unordered_map<std::string, size_t> index_;  // live name -> piece
  std::vector<StackGroup> stacks_;
  std::unordered_map<std::string, size_t> stack_of_frames_;  // joined -> group
  std::unordered_map<std::string, size_t> stack_of_name_;
  std::vector<std::pair<std::string, PyValue>> construct_;
  std::vector<std::pair<std::string, PyValue>> extra_;
  std::unordered_map<std::string, size_t> construct_index_;
  bool stack_dirty_ = true;
  bool construct_dirty_ = true;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_DUMP_WRITER_H_
