// The result of comparing two dumps: msprobe-compatible rows (cells exactly as
// msprobe HEAD prints them) plus lockstep's own verdict per row, the summary
// and the first divergent operator. Reports (CSV, HTML, JSON, xlsx) are
// written from this.
// Thread safety: plain values.
#ifndef LOCKSTEP_COMPARE_RESULT_H_
#define LOCKSTEP_COMPARE_RESULT_H_

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/compare/packed_cells.h"

namespace lockstep {

// msprobe's dump modes: "all" (tensor), "summary" (statistics), "md5".
enum class CompareMode { kTensor, kStatistics, kMd5 };
const char* CompareModeName(CompareMode mode);  // "tensor", "statistics", "md5"

// lockstep's own verdict on a row (see docs/compare.md for how it differs
// from msprobe's Result column).
enum class Verdict : uint8_t { kPass, kWarning, kError, kUnmatched };
const char* VerdictName(Verdict v);  // "pass", "warning", "error", "unmatched"

// Why an entry diverged.
enum class DivergenceReason : uint8_t {
  kNone,
  kPrecision,
  kOverflow,
  kNan,
  kShape,
  kMissing,
  kDtype,
  kArgument,  // a non-tensor argument differs (gelu's approximate, an eps)
  kInput      // an input differs that no dumped operator before it explains
};
const char* DivergenceReasonName(DivergenceReason r);  // "precision", ...

struct CompareRow {
  static constexpr double kNoStat = std::numeric_limits<double>::quiet_NaN();
  // Cells in the order of CompareResult::columns, as msprobe prints them.
  PackedCells cells;
  std::string entry;  // the dump.json entry the row belongs to
  int rank = 0;
  int step = -1;
  bool is_output = false;  // an "output" row (msprobe: NPU Name has ".output.")
  bool is_input = false;   // an input or parameters row (not output, grad)
  bool is_tensor = false;  // a tensor on the target side
  // The module the row's entry belongs to: an index into
  // CompareResult::modules, -1 when none is known (model_context.h).
  int32_t module = -1;
  // lockstep's verdict and every reason behind it (never dropped).
  Verdict verdict = Verdict::kPass;
  DivergenceReason reason = DivergenceReason::kNone;
  std::vector<std::string> messages;
  // msprobe HEAD's Result cell: "pass", "warning" or "error" (a static
  // string, MsprobeResultName's).
  std::string_view msprobe_result;
  // Numeric view for plots and sorting; NaN when not computed.
  double cosine = std::numeric_limits<double>::quiet_NaN();
  double max_abs_err = std::numeric_limits<double>::quiet_NaN();
  double max_rel_err = std::numeric_limits<double>::quiet_NaN();
  // 1 - cosine, computed stably: (‖a-b‖² - (‖a‖-‖b‖)²) / (2‖a‖‖b‖), which
  // keeps its digits where the cosine itself rounds to 1 (metrics.h).
  double one_minus_cos = std::numeric_limits<double>::quiet_NaN();
  // What the first-divergence rule (verdict.h) reads. `error` estimates the
  // relative error of the target against the baseline (tensor mode:
  // ||a-b||/||b||; statistics: from max/min/mean/norm; md5 and non-tensor
  // values: 0 when equal, else inf for md5 and strings, |a-b|/|b| for
  // numbers; inf on a shape or inf/nan mismatch; NaN when unknown). `floor`
  // is the rounding floor of the pair's dtypes (errors at or below it are
  // rounding noise).
  double error = std::numeric_limits<double>::quiet_NaN();
  double floor = 0;
  // Statistics mode: the error estimated from the mean and norm alone (a
  // max or a min is one element, which moves by the largest elementwise
  // difference of the op's inputs, and statistics do not show that);
  // `error` in the other modes.
  double aggregate_error = std::numeric_limits<double>::quiet_NaN();
  // max, min, mean, norm of each side (NaN when absent; a number's value in
  // [0]): fingerprints that find the earlier output an input was.
  std::array<double, 4> target_stats = {kNoStat, kNoStat, kNoStat, kNoStat};
  std::array<double, 4> baseline_stats = {kNoStat, kNoStat, kNoStat, kNoStat};

  // The NPU Name and Bench Name cells ("N/A" when unmatched); "" when the
  // row has no such cell.
  std::string_view npu_name() const {
    return cells.size() > 0 ? cells[0] : std::string_view();
  }
  std::string_view bench_name() const {
    return cells.size() > 1 ? cells[1] : std::string_view();
  }
};

// The earliest entry (execution order, per rank) whose inputs agree with the
// baseline and whose outputs do not.
struct FirstDivergence {
  bool found = false;
  int rank = 0;
  int step = -1;
  std::string entry;  // "Functional.conv2d.0.forward"
  std::string row;    // the first output row that diverged
  DivergenceReason reason = DivergenceReason::kNone;
  std::string
      detail;  // human sentence: "cosine 0.9812 < 0.99, max abs err 0.031"
  size_t row_index = 0;  // index into CompareResult::rows
  // No operator's error exceeds what its inputs explain, yet rows fail: the
  // runs drift apart (accumulated rounding, or a change outside the dump);
  // the fields name the earliest failing row.
  bool drift = false;
  // The entry's call stack from stack.json (the target's, else the
  // baseline's), frames as msprobe writes them ("File p, line n, in f, \n
  // code"); empty when neither rank has one for the entry.
  std::vector<std::string> stack;
};

// A module of the model: a node of the module tree that the report shows.
struct ModuleNode {
  // "layer1.0.conv1" (msprobe's module path); a construct.json parent that
  // names no module ("optimizer", "clip_grad") as it is.
  std::string path;
  std::string cls;      // "Conv2d"; "" when unknown
  int32_t parent = -1;  // index into CompareResult::modules; -1: a root
};

// Where a compared rank's stack.json is, to find the first divergence's
// stack once it is known.
struct RankStackFile {
  int64_t step = -1;
  int64_t rank = 0;
  std::string path;  // the target's stack.json, else the baseline's
};

// An entry present on one side only, found by --align.
struct AlignmentGap {
  std::string entry;
  bool in_target =
      false;  // true: inserted in target; false: missing from target
  int rank = 0;
  size_t position = 0;  // index in that side's entry sequence
  int step = -1;
  // The index of the target entry it comes before (missing entries; the
  // target's entry count when it comes last).
  size_t target_position = 0;
};

// How a collective moves data among the ranks it links.
enum class CollectiveFlow : uint8_t {
  kAll,       // every member's data reaches every member (all_reduce,
              // all_gather, reduce_scatter, all_to_all)
  kFromRoot,  // the root's data reaches the others (broadcast, scatter)
  kToRoot,    // every member's data reaches the root (reduce, gather)
  kSend,      // point to point, from this rank to `peer` (send, isend)
  kRecv,      // point to point, from `peer` to this rank (recv, irecv)
  kNone       // no data (barrier)
};

// One call of a collective on one rank: a `Distributed.<api>.<n>.forward`
// entry of its dump (collectives.h reads them).
struct CollectiveCall {
  std::string entry;  // "Distributed.all_reduce.0.forward"
  std::string api;    // "all_reduce"
  CollectiveFlow flow = CollectiveFlow::kAll;
  // The group as a key that is equal on every member: "world" (the default
  // group, `group` null or absent), "[0, 1, 2, 3]" (its global ranks), a
  // MindSpore group name, or "unknown" (a group that could not be read).
  std::string group = "world";
  int64_t root = -1;  // kFromRoot: src; kToRoot: dst (global ranks); -1: none
  int64_t peer = -1;  // kSend: dst; kRecv: src; -1: unknown (recv from any)
  // The argument holding the data the call sends (positional index and
  // keyword, e.g. 1 and "input_tensor"); -1 and "" when none (recv,
  // barrier, a call dumped after it finished: async_op=True). Its other
  // tensor arguments are receive buffers.
  int data_arg = -1;
  std::string data_kw;
};

// The collective calls of one (step, rank) of the target, in call order.
struct RankCollectives {
  int64_t step = -1;
  int64_t rank = 0;
  std::vector<CollectiveCall> calls;
};

// A rank that a divergence reached through a collective: its call of the
// collective returned data that differs, sent by `from` (already diverged).
struct OriginHop {
  int rank = 0;
  int step = -1;
  std::string entry;  // the collective on `rank`
  int from = 0;
};

// Where a divergence across ranks started (rank_origin.h): the rank that
// diverged on its own first, and the ranks it reached through collectives.
struct RankOrigin {
  bool analyzed = false;  // the compare had several ranks of a step
  bool found = false;
  int rank = 0;
  int step = -1;
  std::string entry;
  DivergenceReason reason = DivergenceReason::kNone;
  std::string detail;
  size_t row_index = 0;         // index into CompareResult::rows
  std::vector<OriginHop> path;  // in the order the ranks were reached
  // Other ranks that diverged on their own (not reached from the origin),
  // earliest first: independent changes (every rank runs the same changed
  // code), or changes the collectives do not explain.
  std::vector<OriginHop> others;  // `from` is the rank itself
};

struct CompareSummary {
  int64_t rows = 0;
  int64_t pass = 0;
  int64_t warning = 0;
  int64_t error = 0;
  int64_t unmatched = 0;
  // msprobe's own Result counts (pass/warning/error as in its CSV).
  int64_t msprobe_pass = 0;
  int64_t msprobe_warning = 0;
  int64_t msprobe_error = 0;
};

// What was compared: two runs' operator dumps, or two checkpoints parameter
// by parameter (checkpoint_compare.h). A checkpoint has no execution order,
// so it has no first divergence: its reports give the largest errors.
enum class CompareSubject : uint8_t { kDumps, kCheckpoints };

struct CompareResult {
  CompareMode mode = CompareMode::kStatistics;
  CompareSubject subject = CompareSubject::kDumps;
  std::vector<std::string> columns;  // msprobe HEAD CSV header
  std::vector<CompareRow> rows;
  CompareSummary summary;
  FirstDivergence first_divergence;  // dumps only
  // Checkpoints: the rows with the largest errors, worst first (the most
  // severe verdict, then the largest relative error); FinishResult fills it.
  std::vector<size_t> largest_errors;
  // Dumps: entries on one side only, found by aligning the op streams.
  // Checkpoints: names in the baseline only (in_target false; names in the
  // target only are unmatched rows).
  std::vector<AlignmentGap> gaps;
  std::string target_path;
  std::string baseline_path;
  std::vector<std::string> warnings;  // problems met while comparing
  // Steps of the baseline that the target lacks (a crashed or shorter run):
  // never a pass.
  std::vector<int64_t> missing_steps;
  // Ranks of a compared step with no comparison: the target lacks them, or
  // their dump.json could not be read; never a pass.
  struct MissingRank {
    int64_t step = -1;
    int64_t rank = 0;
    std::string why;  // "not in the target", "unreadable: ..."
  };
  std::vector<MissingRank> missing_ranks;
  // The module tree (parents before or after children, in any order) that
  // rows' `module` indices point into; empty when the dumps name no module.
  std::vector<ModuleNode> modules;
  std::vector<RankStackFile> stack_files;
  // Dumps of several ranks: each compared rank's collective calls, and the
  // origin of the divergence across them (FinishResult).
  std::vector<RankCollectives> collectives;
  RankOrigin origin;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_RESULT_H_
