#include "lockstep/compare/compare_dumps.h"

#include "lockstep/compare/compare_share.h"
#include "lockstep/core/progress.h"

namespace lockstep {

StatusOr<CompareResult> CompareDumpPaths(const std::string& target,
                                         const std::string& baseline,
                                         const CompareOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(CompareResult result,
                            CompareDumpRows(target, baseline, options));
  FinishResult(&result);
  TimingMark("compare: first divergence");
  return result;
}

// One process's compare is a shared one with a single share.
StatusOr<CompareResult> CompareDumpRows(const std::string& target,
                                        const std::string& baseline,
                                        const CompareOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(ComparePlan plan,
                            PlanCompare(target, baseline, options));
  std::vector<PartialResult> shares;
  shares.push_back(
      CompareShare(plan, ShareOwners(plan, 1), 0, options, std::nullopt));
  return AssembleShares(plan, std::move(shares));
}

}  // namespace lockstep
