// Planning a compare (the pairs every process finds) and assembling the
// shares' partial results into the result one process makes.
#include <algorithm>

#include "lockstep/compare/compare_share.h"
#include "lockstep/compare/model_context.h"
#include "lockstep/core/check.h"

namespace lockstep {
namespace share_assembly {  // named: the layer builds as a unity build
namespace {

// Ranks whose unreadable collective calls are each said in a warning; the
// rest are counted (a malformed group is usually the same on every rank).
constexpr size_t kMaxCollectiveWarnings = 8;

std::string Where(const RankPair& p) {
  std::string s = "rank " + std::to_string(p.target.rank);
  if (p.target_step >= 0) s = "step " + std::to_string(p.target_step) + " " + s;
  return s;
}

// What the plan alone says: paths, discovery warnings, unpaired steps and
// ranks.
CompareResult Start(const ComparePlan& plan) {
  CompareResult result;
  result.target_path = plan.target;
  result.baseline_path = plan.baseline;
  for (const auto& w : plan.target_warnings)
    result.warnings.push_back("target: " + w);
  for (const auto& w : plan.baseline_warnings)
    result.warnings.push_back("baseline: " + w);
  const LayoutPairing& pairing = plan.pairing;
  result.missing_steps = pairing.baseline_only_steps;
  for (int64_t s : pairing.target_only_steps) {
    result.warnings.push_back("step " + std::to_string(s) +
                              " is in the target only");
  }
  for (const StepRank& r : pairing.baseline_only_ranks)
    result.missing_ranks.push_back({r.step, r.rank, "not in the target"});
  for (const StepRank& r : pairing.target_only_ranks) {
    result.warnings.push_back("step " + std::to_string(r.step) + " rank " +
                              std::to_string(r.rank) +
                              " is in the target only");
  }
  return result;
}

// A pair's outcome and where its rows, warnings and gaps start in its
// share.
struct Placed {
  PartialResult* share = nullptr;
  const PairOutcome* outcome = nullptr;
  size_t row = 0, warning = 0, gap = 0;
};

std::vector<Placed> Place(size_t pairs, std::vector<PartialResult>* shares) {
  std::vector<Placed> at(pairs);
  for (PartialResult& s : *shares) {
    size_t row = 0, warning = 0, gap = 0;
    for (const PairOutcome& o : s.pairs) {
      LOCKSTEP_CHECK(o.pair < pairs && at[o.pair].outcome == nullptr);
      at[o.pair] = {&s, &o, row, warning, gap};
      row += o.rows;
      warning += o.warnings;
      gap += o.gaps;
    }
  }
  return at;
}

// Appends a compared pair's warnings, collectives, rows, gaps, modules and
// stack file to `result`. `bulk`: the rows are in place already.
void AddPair(const Placed& p, bool bulk, size_t* collective_problems,
             ModuleTreeBuilder* modules, CompareResult* result) {
  const PairOutcome& o = *p.outcome;
  for (size_t k = 0; k < o.warnings; ++k) {
    if (static_cast<int64_t>(k) == o.collective_warning &&
        ++*collective_problems > kMaxCollectiveWarnings)
      continue;
    result->warnings.push_back(std::move(p.share->warnings[p.warning + k]));
  }
  result->collectives.push_back(o.collectives);
  size_t first_row = bulk ? p.row : result->rows.size();
  if (!bulk) {
    auto from = p.share->rows.begin() + static_cast<ptrdiff_t>(p.row);
    result->rows.insert(result->rows.end(), std::make_move_iterator(from),
                        std::make_move_iterator(from + o.rows));
  }
  auto gap = p.share->gaps.begin() + static_cast<ptrdiff_t>(p.gap);
  result->gaps.insert(result->gaps.end(), std::make_move_iterator(gap),
                      std::make_move_iterator(gap + o.gaps));
  modules->AddRows(o.parents ? &*o.parents : nullptr, first_row,
                   first_row + o.rows);
  if (o.stack_file) result->stack_files.push_back(*o.stack_file);
}

}  // namespace
}  // namespace share_assembly

StatusOr<ComparePlan> PlanCompare(const std::string& target,
                                  const std::string& baseline,
                                  const CompareOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(DumpLayout tl, DiscoverDump(target));
  LOCKSTEP_ASSIGN_OR_RETURN(DumpLayout bl, DiscoverDump(baseline));
  LOCKSTEP_RETURN_IF_ERROR(
      SelectStepsAndRanks(options.steps, options.ranks, target, &tl));
  LOCKSTEP_RETURN_IF_ERROR(
      SelectStepsAndRanks(options.steps, options.ranks, baseline, &bl));
  ComparePlan plan;
  LOCKSTEP_ASSIGN_OR_RETURN(plan.pairing, PairLayouts(tl, bl));
  plan.target = target;
  plan.baseline = baseline;
  plan.target_warnings = std::move(tl.warnings);
  plan.baseline_warnings = std::move(bl.warnings);
  return plan;
}

StatusOr<CompareResult> AssembleShares(const ComparePlan& plan,
                                       std::vector<PartialResult> shares) {
  using share_assembly::Placed;
  CompareResult result = share_assembly::Start(plan);
  const std::vector<RankPair>& pairs = plan.pairing.pairs;
  std::vector<Placed> at = share_assembly::Place(pairs.size(), &shares);
  // One share holds every row in pair order: moved at once.
  const bool bulk = shares.size() == 1;
  if (bulk) result.rows = std::move(shares[0].rows);
  ModuleTreeBuilder modules(&result);
  size_t collective_problems = 0;
  bool any = false;
  Status last_error;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Placed& p = at[i];
    if (p.outcome == nullptr) {
      return Status::Internal(
          "compare shares",
          "no process compared " + share_assembly::Where(pairs[i]));
    }
    if (p.outcome->kind == PairOutcome::Kind::kFailed) return p.outcome->status;
    if (p.outcome->kind == PairOutcome::Kind::kUnreadable) {
      last_error = p.outcome->status;
      result.warnings.push_back(share_assembly::Where(pairs[i]) +
                                " skipped: " + last_error.message());
      result.missing_ranks.push_back({pairs[i].target_step,
                                      pairs[i].target.rank,
                                      "unreadable: " + last_error.message()});
      continue;
    }
    if (!any) {
      result.mode = p.share->mode;
      result.columns = CompareHeader(p.share->mode, p.share->with_stack);
      any = true;
    }
    share_assembly::AddPair(p, bulk, &collective_problems, &modules, &result);
  }
  modules.Finish();
  if (collective_problems > share_assembly::kMaxCollectiveWarnings) {
    result.warnings.push_back(
        "collectives: " +
        std::to_string(collective_problems -
                       share_assembly::kMaxCollectiveWarnings) +
        " more ranks with calls that could not be read fully");
  }
  if (!any) {
    return last_error.ok()
               ? Status::NotFound(plan.target, "no rank pairs to compare")
               : last_error;
  }
  return result;
}

}  // namespace lockstep
