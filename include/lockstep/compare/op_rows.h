// Flattening dump.json entries into compare rows, exactly as msprobe HEAD
// does (docs/msprobe_reference.md §3.2; msprobe's read_op / op_item_parse /
// gen_op_item): one row per leaf (tensor, scalar, null) of an entry's
// input_args, input_kwargs, input, parameters, output, or of a
// parameters_grad entry, in the row order inputs, parameters, outputs,
// parameters_grad.
// Thread safety: pure functions over immutable input.
#ifndef LOCKSTEP_COMPARE_OP_ROWS_H_
#define LOCKSTEP_COMPARE_OP_ROWS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/dump.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/pyvalue.h"

namespace lockstep {

// kDebug: a value saved by name (msprobe's debugger.save, entries
// "{name}.{n}.debug").
enum class RowState { kInput, kOutput, kParameters, kParametersGrad, kDebug };
const char* RowStateName(RowState s);  // "input", "output", ...

// One compare row of one dump.
struct OpRow {
  std::string name;        // "Functional.linear.0.forward.input.0"
  std::string entry;       // "Functional.linear.0.forward"
  size_t entry_index = 0;  // position of the entry in dump.json
  RowState state = RowState::kInput;
  bool is_null = false;    // the leaf was JSON null
  bool is_tensor = false;  // leaf has a tensor "dtype" (torch/mindspore/numpy)
  // A device argument ({"type": "torch.device"}, or a string such as "cuda:0"
  // or "npu"): two runs on different devices differ here by design.
  bool is_device = false;
  std::string dtype;  // "torch.float32", "<class 'int'>", "None"
  std::string shape;  // "[10, 4]", "[]", "None"
  // Max, Min, Mean, Norm as Python values (None when absent).
  std::array<PyValue, 4> stats;
  std::string requires_grad;  // "True", "False", or "N/A" when absent
  std::string data_name;      // "-1" when absent
  std::string md5;            // CRC-32 hex ("" when a null leaf)
  int64_t nbytes = 0;  // tensor bytes from dtype and shape (0 if unknown)
};

// Flattens every entry of `dump` in file order.
std::vector<OpRow> FlattenDump(const DumpFile& dump);

// Flattens one entry (appends to `out`).
void FlattenEntry(const DumpEntry& entry, size_t entry_index,
                  std::vector<OpRow>* out);

// Python str(type(v)) for a JSON value: "<class 'int'>", "<class 'float'>",
// "<class 'str'>", "<class 'bool'>", "<class 'NoneType'>", "<class 'list'>",
// "<class 'dict'>".
std::string PyTypeName(const PyValue& v);

// True when the value holds an "md5" key at any depth (a summary_mode md5
// dump).
bool ValueHasMd5(const PyValue& v);
// True when any entry of the dump has one.
bool DumpHasMd5(const DumpFile& dump);

// A dump.json read for comparing: its top-level fields (no entries), its
// entries flattened into rows as FlattenDump does, and whether any entry
// holds md5 values.
struct FlatDump {
  DumpFile file;
  std::vector<OpRow> rows;
  bool has_md5 = false;
};

// Reads dump.json at `path` entry by entry (format/dump_reader.h's
// ReadDumpJsonStreaming), flattening each entry as it is parsed, so that
// the whole file's tree never exists; a dump that repeats an entry name is
// read whole instead. Errors as ReadDumpJson.
// `progress` as ReadDumpJsonStreaming's.
StatusOr<FlatDump> ReadFlatDump(const std::string& path,
                                const ReadProgress& progress = {});

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_OP_ROWS_H_
