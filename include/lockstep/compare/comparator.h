// Comparing two dumps: the target ("NPU" in msprobe's words) against the
// baseline ("bench"). Flattens both dump.json files into rows, matches them,
// computes msprobe's cells per mode (tensor metrics from one fused pass per
// tensor pair, in parallel across rows), applies msprobe HEAD's Result rules
// and lockstep's own verdict, and finds the first divergent operator.
// Thread safety: CompareRankPair may run concurrently for distinct results.
#ifndef LOCKSTEP_COMPARE_COMPARATOR_H_
#define LOCKSTEP_COMPARE_COMPARATOR_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lockstep/compare/fuzzy_match.h"
#include "lockstep/compare/layer_mapping.h"
#include "lockstep/compare/name_mapping.h"
#include "lockstep/compare/op_rows.h"
#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"
#include "lockstep/format/dump.h"
#include "lockstep/format/tensor.h"

namespace lockstep {

using TensorLoader = std::function<StatusOr<Tensor>(const std::string& path)>;

// How rows are paired: kAuto matches by name (msprobe's way) when both op
// streams call the same APIs in the same order, and aligns them (align.h)
// when they do not (an inserted, removed, fused or decomposed op), saying so
// in a warning; kOn always aligns; kOff never does.
enum class AlignMode { kAuto, kOn, kOff };

struct CompareOptions {
  std::optional<CompareMode> mode;  // nullopt: derived from the dumps (auto)
  bool fuzzy_match = false;         // msprobe -fm
  FuzzyRule fuzzy_rule = FuzzyRule::kMsprobe;
  AlignMode align = AlignMode::kAuto;  // ignored with fuzzy_match
  bool renumber_params_grad = false;
  // msprobe's -dm: target row name -> baseline row name (matching.h); the
  // op streams are then not aligned. Null or empty: none.
  std::shared_ptr<const std::unordered_map<std::string, std::string>>
      data_mapping;
  // msprobe's -am (without a file) and -cm: target rows are matched on their
  // mapped names (name_mapping.h); -am wins over -cm, as in msprobe. The op
  // streams are then not aligned.
  bool api_mapping = false;
  std::shared_ptr<const CellMapping> cell_mapping;
  // msprobe's -am FILE: the usable entries (UsableApiMappings), applied on
  // top of the built-in names; non-null implies api_mapping.
  std::shared_ptr<const std::vector<ApiMappingEntry>> api_mapping_entries;
  // msprobe's -lm: each rank pair is compared with the data mapping made
  // from its two dumps' construct.json and stack.json (layer_mapping.h)
  // under these rules (null: -lm without a file); a pair with neither file
  // is matched by name, with a warning. Excludes data_mapping and the name
  // mappings.
  bool layer_mapping = false;
  std::shared_ptr<const LayerRules> layer_rules;
  // Only these steps / ranks of each side (empty: all). A step or rank
  // asked for that one side lacks is an error (CompareDumpRows).
  std::vector<int64_t> steps, ranks;
  int jobs = 1;              // rows compared in parallel (tensor mode)
  TensorLoader load_tensor;  // REQUIRES: set for tensor mode
  // Called with (rows done, rows total) as rows are compared; may be empty.
  // May be called from several threads at once.
  std::function<void(size_t, size_t)> progress;
  // Called with (bytes parsed, bytes total) of a rank pair's two dump.json
  // files as they are read (CompareDumpPaths); may be empty. May be called
  // from several threads at once.
  std::function<void(size_t, size_t)> read_progress;
  // Tensor mode: reads a row's tensor from elsewhere than a dump's files (a
  // checkpoint compare: the tensor a parameter name stands for); `target`
  // says which side. Rows that are not tensors on both sides are not read.
  // Empty: tensors are read from each dump's dump_tensor_data.
  std::function<StatusOr<Tensor>(bool target, const OpRow& row)> row_tensor;
};

// One (step, rank) pair of dumps.
struct DumpPair {
  const DumpFile* target = nullptr;
  const DumpFile* baseline = nullptr;
  const StackMap* target_stack = nullptr;  // may be null (no stack column)
  int step = -1;
  int rank = 0;
  // Rows already flattened (ReadFlatDump), moved from; the DumpFiles then
  // give only their top-level fields. Null: flatten the DumpFiles' entries.
  std::vector<OpRow>* target_rows = nullptr;
  std::vector<OpRow>* baseline_rows = nullptr;
  // Rows already matched: (*match)[i] is the baseline row of target row i,
  // -1 for none. Null: matched here, by name or by alignment (options).
  const std::vector<int>* match = nullptr;
};

// msprobe's get_dump_mode: tensor task -> tensor; statistics with md5 on both
// sides -> md5; statistics -> statistics; lockstep's shadow task (statistics
// plus each call's float64 check) -> statistics. Errors on a task mismatch
// or md5 on one side only, naming both files.
StatusOr<CompareMode> DetectMode(const DumpFile& target,
                                 const DumpFile& baseline);

// The mode to compare in: `forced` when given (md5 is refused unless both
// dumps hold CRC-32 values: comparing "no value" with "no value" proves
// nothing), else DetectMode.
StatusOr<CompareMode> ChooseMode(std::optional<CompareMode> forced,
                                 const DumpFile& target,
                                 const DumpFile& baseline);
// As above, for dumps read with ReadFlatDump.
StatusOr<CompareMode> ChooseMode(std::optional<CompareMode> forced,
                                 const FlatDump& target,
                                 const FlatDump& baseline);

// msprobe HEAD's CSV header for a mode.
std::vector<std::string> CompareHeader(CompareMode mode, bool with_stack);

// Compares one rank pair and appends its rows to `result` (whose mode and
// columns must already be set; the stack column is filled when the columns
// have one, "N/A" where `pair.target_stack` is null). Rows are in target
// order.
Status CompareRankPair(const DumpPair& pair, const CompareOptions& options,
                       CompareResult* result);

// Recomputes result->summary and result->first_divergence (dumps, with
// the divergence's stack: AttachDivergenceStack, model_context.h) or
// result->largest_errors (checkpoints) from the rows.
void FinishResult(CompareResult* result);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_COMPARATOR_H_
