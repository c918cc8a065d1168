// One compare shared among cooperating processes (MPI ranks on the nodes of
// a cluster, or any transport): every process finds the same (step, rank)
// pairs, compares only its share of them (reading only those ranks'
// files), and process 0 assembles the shares into exactly the result that
// one process comparing everything makes (CompareDumpRows is this with one
// share). The transport is injected (ShareGroup), so this layer links no
// MPI; lockstep-mpi (src/cli/mpi/) gives an MPI one.
//
// Which pairs a process gets: within each step, a block of consecutive
// ranks (process p of P: positions [p*n/P, (p+1)*n/P) of the step's n
// pairs), the same ranks in every step, so that a process started on the
// node that holds those ranks' dumps reads its own disk.
//
// Thread safety: thread-compatible; uses options.jobs threads inside.
#ifndef LOCKSTEP_COMPARE_COMPARE_SHARE_H_
#define LOCKSTEP_COMPARE_COMPARE_SHARE_H_

#include <optional>
#include <string>
#include <vector>

#include "lockstep/compare/comparator.h"
#include "lockstep/compare/partial_result.h"
#include "lockstep/compare/result.h"
#include "lockstep/core/status.h"
#include "lockstep/format/discovery.h"

namespace lockstep {

// The processes sharing a compare. Every process must make the same calls
// in the same order (they are collective operations).
class ShareGroup {
 public:
  virtual ~ShareGroup() = default;
  virtual int index() const = 0;  // this process, 0 .. size() - 1
  virtual int size() const = 0;
  // Every process's `mine`, in process order, on every process.
  virtual std::vector<std::string> AllGather(const std::string& mine) = 0;
  // Every process's `mine`, in process order, on process 0; nothing
  // elsewhere.
  virtual std::vector<std::string> Gather(const std::string& mine) = 0;
};

// What every process finds before comparing: the two layouts paired, as
// CompareDumpRows pairs them (options' --step/--rank applied).
struct ComparePlan {
  std::string target, baseline;
  LayoutPairing pairing;
  std::vector<std::string> target_warnings, baseline_warnings;
};
StatusOr<ComparePlan> PlanCompare(const std::string& target,
                                  const std::string& baseline,
                                  const CompareOptions& options);

// The process (0 .. processes - 1) that compares each pair of `plan`.
std::vector<int> ShareOwners(const ComparePlan& plan, int processes);

// The mode and columns every pair is compared with.
struct CompareColumns {
  CompareMode mode = CompareMode::kStatistics;
  bool with_stack = false;
};

// Compares the pairs of `plan` whose owner is `process`, in pair order,
// stopping after a pair that fails. `columns`: the mode and columns to use;
// nullopt: chosen by the share's first readable pair, as CompareDumpRows
// chooses them by the first of all.
PartialResult CompareShare(const ComparePlan& plan,
                           const std::vector<int>& owners, int process,
                           const CompareOptions& options,
                           std::optional<CompareColumns> columns);

// The result of every share (in any order) as one process makes it:
// CompareDumpRows's result or error. REQUIRES: the shares cover every pair
// up to the first failed one, compared with the same columns (the mode and
// columns of the first readable pair of all).
StatusOr<CompareResult> AssembleShares(const ComparePlan& plan,
                                       std::vector<PartialResult> shares);

// CompareDumpRows shared among `group`'s processes. Process 0 gets
// CompareDumpRows(target, baseline, options)'s result or error. The others
// get an empty result (no columns, no rows), not to be reported, or the
// error when it came before the pairs were compared: those errors (a path
// missing on one node) are every process's, the first process's first.
// Processes that see different pairs fail with InvalidArgument. A corrupt
// partial result is Corruption (process 0).
StatusOr<CompareResult> CompareDumpRowsShared(const std::string& target,
                                              const std::string& baseline,
                                              const CompareOptions& options,
                                              ShareGroup* group);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_COMPARE_SHARE_H_
