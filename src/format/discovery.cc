#include "lockstep/format/discovery.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <string_view>

#include "format/str_cat.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDirsVisited = 10000;
constexpr std::string_view kLookedFor =
    "no msprobe dump here: looked for dump.json (a rank dir), rank{R}/ or "
    "proc{pid}/ dirs holding dump.json (a step dir), step{N}/ dirs holding "
    "those (a dump root), and for a single subdirectory leading to one of "
    "these (up to 3 levels down)";

// N of prefix + N, digits without leading zeros; `allow_empty`: prefix alone
// is 0 (msprobe's "rank").
std::optional<int64_t> NumberAfter(std::string_view name,
                                   std::string_view prefix, bool allow_empty) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = name.substr(prefix.size());
  if (digits.empty())
    return allow_empty ? std::optional<int64_t>(0) : std::nullopt;
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;
  int64_t n = 0;
  auto r = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (r.ec != std::errc() || r.ptr != digits.data() + digits.size())
    return std::nullopt;
  return n;
}

std::optional<int64_t> StepNumber(std::string_view name) {
  return NumberAfter(name, "step", false);
}
std::optional<int64_t> RankNumber(std::string_view name) {
  return NumberAfter(name, "rank", true);
}
bool IsProcName(std::string_view name) {
  if (name.substr(0, 4) != "proc" || name.size() == 4) return false;
  return std::all_of(name.begin() + 4, name.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// Inside a dump, a symbolic link is neither a file nor a directory: nothing
// outside the dump is read through one (the path the user gives may be one).
bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(fs::symlink_status(p, ec));
}
bool IsDir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(fs::symlink_status(p, ec));
}

// The name of a directory as the user sees it ("." resolved).
std::string BaseName(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::path(dir), ec);
  if (ec) p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

// Names of the subdirectories of `dir`, sorted; hidden ones skipped.
std::vector<std::string> Subdirs(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.empty() && name[0] != '.' && IsDir(it->path()))
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

RankLayout MakeRank(const fs::path& dir, const fs::path& dump_json) {
  RankLayout r;
  r.dir = dir.string();
  r.name = BaseName(r.dir);
  r.rank = RankNumber(r.name).value_or(0);
  r.dump_json = dump_json.string();
  r.has_stack_json = IsFile(dir / "stack.json");
  r.has_construct_json = IsFile(dir / "construct.json");
  r.has_tensor_data = IsDir(dir / "dump_tensor_data");
  r.has_tensor_pack = IsFile(dir / "dump_tensor_data.pack");
  return r;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += out.empty() ? n : StrCat(", ", n);
  return out;
}

// The rank dirs of a step dir, sorted; empty when it has none. Rank dirs
// without dump.json (a run killed before the step's end) are left out and
// listed in `unfinished`.
StatusOr<std::vector<RankLayout>> RanksOfStepDir(
    const std::string& dir, const std::vector<std::string>& names,
    std::vector<std::string>* unfinished) {
  std::vector<std::string> ranks, procs;
  for (const auto& n : names) {
    if (RankNumber(n)) ranks.push_back(n);
    if (IsProcName(n)) procs.push_back(n);
  }
  if (ranks.empty() && procs.size() > 1) {
    return Status::InvalidArgument(
        dir,
        StrCat("several proc{pid} dirs (", JoinNames(procs),
               "): msprobe names a rank dir so when torch.distributed is not "
               "initialised, and pids do not say which process is which. Note: "
               "pass "
               "one of these dirs"));
  }
  if (ranks.empty()) ranks = procs;
  std::vector<RankLayout> out;
  for (const auto& n : ranks) {
    fs::path rank_dir = fs::path(dir) / n;
    if (!IsFile(rank_dir / "dump.json")) {
      unfinished->push_back(rank_dir.string());
      continue;
    }
    out.push_back(MakeRank(rank_dir, rank_dir / "dump.json"));
  }
  std::sort(
      out.begin(), out.end(),
      [](const RankLayout& a, const RankLayout& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].rank == out[i - 1].rank) {
      return Status::InvalidArgument(
          dir, StrCat(out[i - 1].name, "/ and ", out[i].name,
                      "/ are both rank ", std::to_string(out[i].rank)));
    }
  }
  return out;
}

// Warns of each rank dir that RanksOfStepDir left out.
void NoteUnfinished(const std::vector<std::string>& unfinished,
                    DumpLayout* layout) {
  for (const auto& u : unfinished) {
    layout->warnings.push_back(
        StrCat(u, " has no dump.json (an unfinished step?): skipped"));
  }
}

// A root: every step{N} dir must hold ranks.
StatusOr<DumpLayout> RootLayout(const std::string& dir,
                                const std::vector<std::string>& steps) {
  DumpLayout layout;
  layout.root = dir;
  for (const auto& n : steps) {
    std::string step_dir = (fs::path(dir) / n).string();
    std::vector<std::string> unfinished;
    LOCKSTEP_ASSIGN_OR_RETURN(
        auto ranks, RanksOfStepDir(step_dir, Subdirs(step_dir), &unfinished));
    NoteUnfinished(unfinished, &layout);
    if (ranks.empty() && !unfinished.empty()) continue;
    if (ranks.empty()) {
      return Status::NotFound(step_dir,
                              "a step dir without rank{R}/ or proc{pid}/ dirs");
    }
    layout.steps.push_back(
        StepLayout{*StepNumber(n), step_dir, std::move(ranks)});
  }
  if (layout.steps.empty()) {
    return Status::NotFound(dir, "no step has a finished dump.json");
  }
  std::sort(
      layout.steps.begin(), layout.steps.end(),
      [](const StepLayout& a, const StepLayout& b) { return a.step < b.step; });
  return layout;
}

DumpLayout SingleRank(const std::string& root, RankLayout rank) {
  DumpLayout layout;
  layout.root = root;
  layout.steps.push_back(StepLayout{-1, "", {std::move(rank)}});
  return layout;
}

// The layout at `dir`; nullopt when nothing leads to a dump from there.
StatusOr<std::optional<DumpLayout>> DiscoverDir(const std::string& dir,
                                                int depth_left, int* budget);

// Descends into the one subdirectory that leads to a dump. A subdirectory
// whose dump is broken (or ambiguous) counts as leading to one, so that its
// error is reported when it is the only one.
StatusOr<std::optional<DumpLayout>> Descend(
    const std::string& dir, const std::vector<std::string>& names,
    int depth_left, int* budget) {
  std::vector<std::string> hits;
  StatusOr<std::optional<DumpLayout>> found = std::optional<DumpLayout>();
  for (const auto& n : names) {
    if (n == "dump_tensor_data") continue;
    auto sub =
        DiscoverDir((fs::path(dir) / n).string(), depth_left - 1, budget);
    if (*budget < 0 && !sub.ok()) return sub.status();
    if (sub.ok() && !sub->has_value()) continue;
    hits.push_back(n);
    found = std::move(sub);
  }
  if (hits.size() > 1) {
    return Status::InvalidArgument(
        dir, StrCat("several subdirectories lead to dumps (", JoinNames(hits),
                    "). Note: pass one of them"));
  }
  return found;
}

StatusOr<std::optional<DumpLayout>> DiscoverDir(const std::string& dir,
                                                int depth_left, int* budget) {
  if (--*budget < 0) {
    return Status::InvalidArgument(
        dir,
        "too many directories to search for a dump. Note: "
        "pass the dump's step or rank dir");
  }
  if (IsFile(fs::path(dir) / "dump.json")) {
    return std::optional(
        SingleRank(dir, MakeRank(dir, fs::path(dir) / "dump.json")));
  }
  std::vector<std::string> names = Subdirs(dir);
  std::vector<std::string> steps;
  for (const auto& n : names) {
    if (StepNumber(n)) steps.push_back(n);
  }
  std::vector<std::string> unfinished;
  LOCKSTEP_ASSIGN_OR_RETURN(auto ranks,
                            RanksOfStepDir(dir, names, &unfinished));
  if (ranks.empty() && !unfinished.empty() && steps.empty()) {
    return Status::NotFound(unfinished[0], "a rank dir without dump.json");
  }
  if ((!ranks.empty() || !unfinished.empty()) && !steps.empty()) {
    return Status::InvalidArgument(dir, "holds both step{N}/ and rank dirs");
  }
  if (!ranks.empty()) {
    DumpLayout layout;
    layout.root = dir;
    NoteUnfinished(unfinished, &layout);
    layout.steps.push_back(StepLayout{StepNumber(BaseName(dir)).value_or(-1),
                                      dir, std::move(ranks)});
    return std::optional(std::move(layout));
  }
  if (!steps.empty()) {
    LOCKSTEP_ASSIGN_OR_RETURN(DumpLayout root, RootLayout(dir, steps));
    return std::optional(std::move(root));
  }
  if (depth_left <= 0) return std::optional<DumpLayout>();
  return Descend(dir, names, depth_left, budget);
}

}  // namespace

size_t DumpLayout::rank_count() const {
  size_t n = 0;
  for (const auto& s : steps) n += s.ranks.size();
  return n;
}

StatusOr<DumpLayout> DiscoverDump(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Status::NotFound(path, "no such file or directory");
  if (fs::is_regular_file(path, ec)) {
    // The user's own path: a link there is followed, to the real file.
    fs::path file = fs::canonical(path, ec);
    if (ec) file = path;
    fs::path parent = file.parent_path();
    if (parent.empty()) parent = ".";
    return SingleRank(parent.string(), MakeRank(parent, file));
  }
  if (!fs::is_directory(path, ec))
    return Status::InvalidArgument(path, "neither a file nor a directory");
  int budget = kMaxDirsVisited;
  LOCKSTEP_ASSIGN_OR_RETURN(auto layout,
                            DiscoverDir(path, kMaxDumpSearchDepth, &budget));
  if (!layout) return Status::NotFound(path, kLookedFor);
  return std::move(*layout);
}

}  // namespace lockstep

namespace lockstep {
namespace {

std::string StepList(const DumpLayout& layout) {
  std::string out = "[";
  for (const auto& s : layout.steps) {
    out += StrCat(out.size() > 1 ? ", " : "", std::to_string(s.step));
  }
  return out + "]";
}

// Ranks by position when the counts agree (msprobe), by number otherwise
// (both lists are sorted by rank number, numbers unique).
void PairRanks(const StepLayout& t, const StepLayout& b, LayoutPairing* out) {
  if (t.ranks.size() == b.ranks.size()) {
    for (size_t i = 0; i < t.ranks.size(); ++i)
      out->pairs.push_back(RankPair{t.step, b.step, t.ranks[i], b.ranks[i]});
    return;
  }
  size_t i = 0, j = 0;
  while (i < t.ranks.size() || j < b.ranks.size()) {
    if (j == b.ranks.size() ||
        (i < t.ranks.size() && t.ranks[i].rank < b.ranks[j].rank)) {
      out->target_only_ranks.push_back({t.step, t.ranks[i++].rank});
    } else if (i == t.ranks.size() || b.ranks[j].rank < t.ranks[i].rank) {
      out->baseline_only_ranks.push_back({t.step, b.ranks[j++].rank});
    } else {
      out->pairs.push_back(
          RankPair{t.step, b.step, t.ranks[i++], b.ranks[j++]});
    }
  }
}

}  // namespace

StatusOr<LayoutPairing> PairLayouts(const DumpLayout& target,
                                    const DumpLayout& baseline) {
  LayoutPairing out;
  if (target.steps.size() == 1 && baseline.steps.size() == 1) {
    PairRanks(target.steps[0], baseline.steps[0], &out);
    return out;
  }
  // Both step lists are sorted: merge them.
  size_t i = 0, j = 0;
  while (i < target.steps.size() || j < baseline.steps.size()) {
    if (j == baseline.steps.size() ||
        (i < target.steps.size() &&
         target.steps[i].step < baseline.steps[j].step)) {
      out.target_only_steps.push_back(target.steps[i++].step);
    } else if (i == target.steps.size() ||
               baseline.steps[j].step < target.steps[i].step) {
      out.baseline_only_steps.push_back(baseline.steps[j++].step);
    } else {
      PairRanks(target.steps[i++], baseline.steps[j++], &out);
    }
  }
  if (out.pairs.empty()) {
    return Status::InvalidArgument(
        StrCat(target.root, " vs ", baseline.root),
        StrCat("no step in common: target has steps ", StepList(target),
               ", baseline ", StepList(baseline)));
  }
  return out;
}

Status SelectStepsAndRanks(const std::vector<int64_t>& steps,
                           const std::vector<int64_t>& ranks,
                           const std::string& path, DumpLayout* layout) {
  auto wanted = [](const std::vector<int64_t>& list, int64_t v) {
    return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
  };
  std::vector<StepLayout> kept;
  for (StepLayout& s : layout->steps) {
    if (s.step >= 0 && !wanted(steps, s.step)) continue;
    std::vector<RankLayout> kept_ranks;
    for (RankLayout& r : s.ranks) {
      if (wanted(ranks, r.rank)) kept_ranks.push_back(std::move(r));
    }
    s.ranks = std::move(kept_ranks);
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
  if (int64_t v = missing(steps, true); v >= 0) {
    // A step or rank the dump lacks is a usage error (exit 2), as msprobe
    // users type --step from habit.
    return Status::InvalidArgument(path,
                                   "has no step " + std::to_string(v) +
                                       " (--step) with the ranks asked for");
  }
  if (int64_t v = missing(ranks, false); v >= 0) {
    return Status::InvalidArgument(path,
                                   "has no rank " + std::to_string(v) +
                                       " (--rank) in the steps asked for");
  }
  layout->steps = std::move(kept);
  return Status::Ok();
}

}  // namespace lockstep
