#include "lockstep/compare/compare_dumps.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "lockstep/compare/collectives.h"
#include "lockstep/compare/model_context.h"
#include "lockstep/core/progress.h"
#include "lockstep/format/discovery.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/tensor_file.h"

namespace lockstep {
namespace {

std::string Where(const RankPair& p) {
  std::string s = "rank " + std::to_string(p.target.rank);
  if (p.target_step >= 0) s = "step " + std::to_string(p.target_step) + " " + s;
  return s;
}

// The side of the pair whose rank dir has a file (`has`: which one): the
// target, else the baseline; nullptr when neither has it.
const RankLayout* SideWith(const RankPair& p, bool RankLayout::*has) {
  return p.target.*has ? &p.target : p.baseline.*has ? &p.baseline : nullptr;
}

// Reads the stack.json for the pair's stack column, if any.
std::optional<StackMap> ReadPairStack(const RankPair& p,
                                      std::vector<std::string>* warnings) {
  const RankLayout* src = SideWith(p, &RankLayout::has_stack_json);
  if (src == nullptr) return std::nullopt;
  StatusOr<StackMap> s = ReadStackJson(src->dir + "/stack.json");
  if (!s.ok()) {
    warnings->push_back(Where(p) +
                        ": stack column left out: " + s.status().message());
    return std::nullopt;
  }
  return std::move(*s);
}

// The target's stack.json, else the baseline's, for the first divergence.
void NoteStackFile(const RankPair& p, CompareResult* result) {
  const RankLayout* src = SideWith(p, &RankLayout::has_stack_json);
  if (src != nullptr) {
    result->stack_files.push_back(
        {p.target_step, p.target.rank, src->dir + "/stack.json"});
  }
}

// The pair's construct.json (the target's, else the baseline's), if any. It
// only shapes the report's module tree: what cannot be read is a warning.
std::optional<ModuleParents> ReadPairParents(
    const RankPair& p, std::vector<std::string>* warnings) {
  const RankLayout* src = SideWith(p, &RankLayout::has_construct_json);
  if (src == nullptr) return std::nullopt;
  StatusOr<ModuleParents> m = ReadModuleParents(src->dir + "/construct.json");
  if (!m.ok()) {
    warnings->push_back(Where(p) + ": module tree without construct.json: " +
                        m.status().message());
    return std::nullopt;
  }
  if (!m->problems.empty()) {
    std::string more = m->problems.size() == 1
                           ? ""
                           : " (and " + std::to_string(m->problems.size() - 1) +
                                 " more values)";
    warnings->push_back(Where(p) + ": " + m->problems[0] + more +
                        "; left out of the module tree");
  }
  return std::move(*m);
}

// Ranks whose unreadable collective calls are each said in a warning; the
// rest are counted (a malformed group is usually the same on every rank).
constexpr size_t kMaxCollectiveWarnings = 8;

// The target's collective calls of the pair, for the origin across ranks;
// what cannot be read is a warning (the first problem of a rank).
void NoteCollectives(const RankPair& p, const std::vector<OpRow>& rows,
                     CompareResult* result, size_t* ranks_with_problems) {
  std::vector<std::string> problems;
  result->collectives.push_back(
      {p.target_step, p.target.rank,
       ReadCollectives(rows, p.target.rank, &problems)});
  if (problems.empty()) return;
  if (++*ranks_with_problems > kMaxCollectiveWarnings) return;
  std::string more =
      problems.size() == 1
          ? ""
          : " (and " + std::to_string(problems.size() - 1) + " more calls)";
  result->warnings.push_back(Where(p) + ": " + problems[0] + more);
}

}  // namespace

StatusOr<CompareResult> CompareDumpPaths(const std::string& target,
                                         const std::string& baseline,
                                         const CompareOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(CompareResult result,
                            CompareDumpRows(target, baseline, options));
  FinishResult(&result);
  TimingMark("compare: first divergence");
  return result;
}

namespace {

// Keeps the steps and ranks `o` selects (--step, --rank). A step numbered
// -1 (a rank dir or dump.json given: the user chose it) stays.
Status Select(const CompareOptions& o, const std::string& path,
              DumpLayout* layout) {
  auto wanted = [](const std::vector<int64_t>& list, int64_t v) {
    return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
  };
  std::vector<StepLayout> kept;
  for (StepLayout& s : layout->steps) {
    if (s.step >= 0 && !wanted(o.steps, s.step)) continue;
    std::vector<RankLayout> ranks;
    for (RankLayout& r : s.ranks) {
      if (wanted(o.ranks, r.rank)) ranks.push_back(std::move(r));
    }
    s.ranks = std::move(ranks);
    if (!s.ranks.empty()) kept.push_back(std::move(s));
  }
  auto missing = [&](const std::vector<int64_t>& list, bool step) {
    for (int64_t v : list) {
      bool found = false;
      for (const StepLayout& s : kept) {
        if (step) found = found || s.step == v || s.step < 0;
        for (const RankLayout& r : s.ranks)
          found = found || (!step && r.rank == v);
      }
      if (!found) return v;
    }
    return int64_t{-1};
  };
  if (int64_t v = missing(o.steps, true); v >= 0) {
    return Status::NotFound(path, "has no step " + std::to_string(v) +
                                      " (--step) with the ranks asked for");
  }
  if (int64_t v = missing(o.ranks, false); v >= 0) {
    return Status::NotFound(path, "has no rank " + std::to_string(v) +
                                      " (--rank) in the steps asked for");
  }
  layout->steps = std::move(kept);
  return Status::Ok();
}

}  // namespace

StatusOr<CompareResult> CompareDumpRows(const std::string& target,
                                        const std::string& baseline,
                                        const CompareOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(DumpLayout tl, DiscoverDump(target));
  LOCKSTEP_ASSIGN_OR_RETURN(DumpLayout bl, DiscoverDump(baseline));
  LOCKSTEP_RETURN_IF_ERROR(Select(options, target, &tl));
  LOCKSTEP_RETURN_IF_ERROR(Select(options, baseline, &bl));
  LOCKSTEP_ASSIGN_OR_RETURN(LayoutPairing pairing, PairLayouts(tl, bl));
  CompareOptions opt = options;
  if (!opt.load_tensor) opt.load_tensor = ReadTensorFile;
  CompareResult result;
  result.target_path = target;
  result.baseline_path = baseline;
  for (const auto& w : tl.warnings) result.warnings.push_back("target: " + w);
  for (const auto& w : bl.warnings) result.warnings.push_back("baseline: " + w);
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
  ModuleTreeBuilder modules(&result);
  size_t collective_problems = 0;
  bool mode_set = false, any = false;
  Status last_error;
  TimingMark("compare: start");
  for (const RankPair& p : pairing.pairs) {
    // The two files are read at once, each flattened entry by entry.
    StatusOr<FlatDump> t = Status::Internal("unread"), b = t;
    std::atomic<size_t> parsed[2] = {{0}, {0}}, sizes[2] = {{0}, {0}};
    auto progress_of = [&](int side) -> ReadProgress {
      if (!opt.read_progress) return {};
      return [&, side](size_t done, size_t total) {
        // Said a MB at a time: an entry is a few hundred bytes.
        if (done - parsed[side] < (size_t{1} << 20) && done != total) return;
        parsed[side] = done;
        sizes[side] = total;
        // Both sizes first: one file's alone would read as all done.
        if (sizes[0] == 0 || sizes[1] == 0) return;
        opt.read_progress(parsed[0] + parsed[1], sizes[0] + sizes[1]);
      };
    };
    std::thread other(
        [&] { b = ReadFlatDump(p.baseline.dump_json, progress_of(1)); });
    t = ReadFlatDump(p.target.dump_json, progress_of(0));
    other.join();
    TimingMark("compare: read and flatten both dump.json");
    if (!t.ok() || !b.ok()) {
      last_error = t.ok() ? b.status() : t.status();
      result.warnings.push_back(Where(p) + " skipped: " + last_error.message());
      result.missing_ranks.push_back({p.target_step, p.target.rank,
                                      "unreadable: " + last_error.message()});
      continue;
    }
    for (const FlatDump* d : {&*t, &*b}) {
      if (d->rows.empty()) {
        return Status::InvalidArgument(
            d->file.path,
            "no entries: an empty dump has nothing to compare (was "
            "the probe started before the step ran?)");
      }
    }
    if (!mode_set) {
      LOCKSTEP_ASSIGN_OR_RETURN(result.mode, ChooseMode(opt.mode, *t, *b));
      mode_set = true;
    }
    std::optional<StackMap> stack = ReadPairStack(p, &result.warnings);
    if (!any) result.columns = CompareHeader(result.mode, stack.has_value());
    any = true;
    DumpPair pair{&t->file, &b->file, stack ? &*stack : nullptr,
                  static_cast<int>(p.target_step),
                  static_cast<int>(p.target.rank)};
    pair.target_rows = &t->rows;
    pair.baseline_rows = &b->rows;
    NoteCollectives(p, t->rows, &result, &collective_problems);
    size_t first_row = result.rows.size();
    LOCKSTEP_RETURN_IF_ERROR(CompareRankPair(pair, opt, &result));
    std::optional<ModuleParents> parents = ReadPairParents(p, &result.warnings);
    modules.AddRows(parents ? &*parents : nullptr, first_row);
    NoteStackFile(p, &result);
    TimingMark("compare: rows");
  }
  modules.Finish();
  if (collective_problems > kMaxCollectiveWarnings) {
    result.warnings.push_back(
        "collectives: " +
        std::to_string(collective_problems - kMaxCollectiveWarnings) +
        " more ranks with calls that could not be read fully");
  }
  if (!any) {
    return last_error.ok()
               ? Status::NotFound(target, "no rank pairs to compare")
               : last_error;
  }
  return result;
}

}  // namespace lockstep
