// Finding the dumps under a path the user gave, in msprobe's layout
// (docs/msprobe_reference.md §2.1), and pairing two runs' dumps step by step
// and rank by rank as msprobe's compare does (§3.1).
//
//   {root}/step{N}/rank{R}/dump.json       (rank dirs:
//   ^rank(?:0|[1-9][0-9]*)?$)
//                 /proc{pid}/dump.json     (no torch.distributed: one process)
//
// The path may be a dump.json file, a rank dir (holding dump.json), a step
// dir (holding rank dirs) or a root (holding step{N} dirs). A directory that
// is none of these but has exactly one subdirectory that leads to a dump
// (e.g. msprobe's `out/` between a run dir and step0/) is descended into, up
// to kMaxDumpSearchDepth levels.
//
// Naming rules: "rank" (no number) and a proc{pid} dir are rank 0. When a
// step dir holds rank dirs, proc dirs beside them are ignored; several proc
// dirs and no rank dir is an error (InvalidArgument), since pids say nothing
// about which process is which (pass one proc dir instead). Directories
// that match no pattern (e.g. MindSpore's pynative/ beside step dirs) are
// ignored; step and rank numbers must be written without leading zeros, as
// msprobe writes them.
//
// Thread safety: pure functions (they read the filesystem).
#ifndef LOCKSTEP_FORMAT_DISCOVERY_H_
#define LOCKSTEP_FORMAT_DISCOVERY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

inline constexpr int kMaxDumpSearchDepth = 3;

// One rank of one step: a directory holding dump.json.
struct RankLayout {
  int64_t rank = 0;       // R of rank{R}; 0 for "rank", proc{pid} and others
  std::string name;       // the directory's name: "rank3", "proc2016", ...
  std::string dir;        // the directory holding dump.json
  std::string dump_json;  // the dump file (usually dir + "/dump.json")
  bool has_stack_json = false;
  bool has_construct_json = false;
  bool has_tensor_data = false;  // dump_tensor_data/ exists
  bool has_tensor_pack = false;  // dump_tensor_data.pack exists
};

// One step: its ranks, sorted by rank number.
struct StepLayout {
  int64_t step = -1;  // N of step{N}; -1 when there is no step dir
  std::string dir;    // the step dir; "" when there is none
  std::vector<RankLayout> ranks;
};

// What was found: steps sorted by step number.
struct DumpLayout {
  std::string root;  // where the layout was found (after descending)
  std::vector<StepLayout> steps;
  // Rank dirs without dump.json (a run killed mid-step) that were skipped,
  // one sentence each; a root or step dir still reads its finished ones.
  std::vector<std::string> warnings;
  size_t rank_count() const;  // over all steps
};

// Finds the dump layout at `path` (see the top of this file). A rank dir or
// a dump.json file gives one step numbered -1 (the user chose that step);
// a step dir gives one step numbered by its name (-1 if it is not step{N}).
// Errors: NotFound listing what was looked for; InvalidArgument for
// ambiguous layouts (two subdirectories leading to dumps, several proc dirs,
// "rank" beside "rank0"); NotFound when no rank dir has a dump.json (rank
// dirs without one beside finished ones are skipped with a warning).
StatusOr<DumpLayout> DiscoverDump(const std::string& path);

// Keeps the steps numbered in `steps` and the ranks numbered in `ranks`
// (empty: all) of `layout`, found at `path`; a step numbered -1 (a rank dir
// or dump.json was given: the user chose it) stays whatever `steps` says.
// NotFound naming the first step or rank asked for that is not there
// ("has no step 7 (--step) with the ranks asked for").
Status SelectStepsAndRanks(const std::vector<int64_t>& steps,
                           const std::vector<int64_t>& ranks,
                           const std::string& path, DumpLayout* layout);

// A target rank and the baseline rank it is compared with.
struct RankPair {
  int64_t target_step = -1;
  int64_t baseline_step = -1;
  RankLayout target;
  RankLayout baseline;
};

// A rank of a step.
struct StepRank {
  int64_t step = -1;
  int64_t rank = 0;
};

struct LayoutPairing {
  std::vector<RankPair> pairs;               // by step, then rank position
  std::vector<int64_t> target_only_steps;    // steps with no baseline
  std::vector<int64_t> baseline_only_steps;  // steps with no target
  // Ranks of a paired step that one side lacks (the target's step number).
  std::vector<StepRank> target_only_ranks;
  std::vector<StepRank> baseline_only_ranks;
};

// Pairs two layouts as msprobe does: when each has a single step, those two
// steps (whatever their numbers: the user chose them); otherwise steps with
// the same number, the others listed as unpaired. Within a step, ranks are
// paired by position in rank order when both sides have as many (msprobe);
// otherwise (msprobe refuses this) ranks of the same number pair and the
// others are listed as unpaired, so a run that lost ranks still compares
// the ones it has.
// Errors: InvalidArgument when no step is common.
StatusOr<LayoutPairing> PairLayouts(const DumpLayout& target,
                                    const DumpLayout& baseline);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_DISCOVERY_H_
