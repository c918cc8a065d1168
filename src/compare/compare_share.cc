// The pair work of a compare: one process's share of the (step, rank)
// pairs, compared as CompareDumpRows compares them, into a PartialResult.
#include "lockstep/compare/compare_share.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <unordered_map>

#include "lockstep/compare/collectives.h"
#include "lockstep/core/progress.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/tensor_file.h"

namespace lockstep {
namespace compare_share {  // named: the layer builds as a unity build
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
std::optional<RankStackFile> StackFile(const RankPair& p) {
  const RankLayout* src = SideWith(p, &RankLayout::has_stack_json);
  if (src == nullptr) return std::nullopt;
  return RankStackFile{p.target_step, p.target.rank, src->dir + "/stack.json"};
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
    m->problems.clear();
  }
  return std::move(*m);
}

// The target's collective calls of the pair, for the origin across ranks;
// what cannot be read is a warning (the first problem of a rank), which
// AssembleShares keeps for the first few ranks only.
void NoteCollectives(const RankPair& p, const std::vector<OpRow>& rows,
                     std::vector<std::string>* warnings, PairOutcome* o,
                     size_t first_warning) {
  std::vector<std::string> problems;
  o->collectives = {p.target_step, p.target.rank,
                    ReadCollectives(rows, p.target.rank, &problems)};
  if (problems.empty()) return;
  std::string more =
      problems.size() == 1
          ? ""
          : " (and " + std::to_string(problems.size() - 1) + " more calls)";
  o->collective_warning =
      static_cast<int32_t>(warnings->size() - first_warning);
  warnings->push_back(Where(p) + ": " + problems[0] + more);
}

struct BothDumps {
  StatusOr<FlatDump> t = Status::Internal("unread"), b = t;
};

// The two files are read at once, each flattened entry by entry.
BothDumps ReadBoth(const RankPair& p, const CompareOptions& opt) {
  BothDumps d;
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
      [&] { d.b = ReadFlatDump(p.baseline.dump_json, progress_of(1)); });
  d.t = ReadFlatDump(p.target.dump_json, progress_of(0));
  other.join();
  TimingMark("compare: read and flatten both dump.json");
  return d;
}

// Checks that neither dump is empty and, for the share's first readable
// pair, chooses the mode.
Status CheckAndChoose(const BothDumps& d, size_t index,
                      const CompareOptions& opt, PartialResult* part) {
  for (const FlatDump* f : {&*d.t, &*d.b}) {
    if (f->rows.empty()) {
      return Status::InvalidArgument(
          f->file.path,
          "no entries: an empty dump has nothing to compare (was "
          "the probe started before the step ran?)");
    }
  }
  if (part->header_pair >= 0) return Status::Ok();
  part->header_pair = static_cast<int64_t>(index);
  if (part->header_given) return Status::Ok();
  LOCKSTEP_ASSIGN_OR_RETURN(part->mode, ChooseMode(opt.mode, *d.t, *d.b));
  return Status::Ok();
}

// With -lm, *out is `opt` with the pair's layer data mapping as its -dm
// (msprobe's generate_data_mapping_by_layer_mapping, per rank as msprobe
// runs it); a pair without construct.json and stack.json gets none.
Status WithLayerMapping(const RankPair& p, const CompareOptions& opt,
                        CompareOptions* out,
                        std::vector<std::string>* warnings) {
  if (!opt.layer_mapping) return Status::Ok();
  LOCKSTEP_ASSIGN_OR_RETURN(LayerPairs pairs,
                            LayerDataMapping(LayerSideOf(p.target.dump_json),
                                             LayerSideOf(p.baseline.dump_json),
                                             opt.layer_rules.get()));
  *out = opt;
  if (pairs.empty()) {
    warnings->push_back(
        "step " + std::to_string(p.target_step) + " rank " +
        std::to_string(p.target.rank) +
        ": --layer-mapping needs construct.json and stack.json beside both "
        "dump.json files, and found neither: rows matched by name");
    return Status::Ok();
  }
  out->data_mapping =
      std::make_shared<const std::unordered_map<std::string, std::string>>(
          pairs.begin(), pairs.end());
  return Status::Ok();
}

// Compares pair `index`, appending its rows, warnings and gaps to `sink`.
PairOutcome ComparePair(const RankPair& p, size_t index,
                        const CompareOptions& opt, PartialResult* part,
                        CompareResult* sink) {
  PairOutcome o;
  o.pair = index;
  const size_t rows0 = sink->rows.size(), warnings0 = sink->warnings.size(),
               gaps0 = sink->gaps.size();
  BothDumps d = ReadBoth(p, opt);
  if (!d.t.ok() || !d.b.ok()) {
    o.kind = PairOutcome::Kind::kUnreadable;
    o.status = d.t.ok() ? d.b.status() : d.t.status();
    return o;
  }
  Status s = CheckAndChoose(d, index, opt, part);
  std::optional<StackMap> stack;
  if (s.ok()) {
    stack = ReadPairStack(p, &sink->warnings);
    if (sink->columns.empty()) {  // the share's first: it sets the columns
      part->with_stack = stack.has_value();
      sink->mode = part->mode;
      sink->columns = CompareHeader(part->mode, part->with_stack);
    }
    DumpPair pair{&d.t->file, &d.b->file, stack ? &*stack : nullptr,
                  static_cast<int>(p.target_step),
                  static_cast<int>(p.target.rank)};
    pair.target_rows = &d.t->rows;
    pair.baseline_rows = &d.b->rows;
    NoteCollectives(p, d.t->rows, &sink->warnings, &o, warnings0);
    CompareOptions layered;
    s = WithLayerMapping(p, opt, &layered, &sink->warnings);
    if (s.ok())
      s = CompareRankPair(pair, opt.layer_mapping ? layered : opt, sink);
  }
  if (!s.ok()) {  // the compare ends here: what the pair added goes
    sink->rows.resize(rows0);
    sink->warnings.resize(warnings0);
    sink->gaps.resize(gaps0);
    o.collective_warning = -1;
    o.kind = PairOutcome::Kind::kFailed;
    o.status = s;
    return o;
  }
  o.parents = ReadPairParents(p, &sink->warnings);
  o.stack_file = StackFile(p);
  o.rows = sink->rows.size() - rows0;
  o.warnings = sink->warnings.size() - warnings0;
  o.gaps = sink->gaps.size() - gaps0;
  TimingMark("compare: rows");
  return o;
}

}  // namespace
}  // namespace compare_share

std::vector<int> ShareOwners(const ComparePlan& plan, int processes) {
  const std::vector<RankPair>& pairs = plan.pairing.pairs;
  std::vector<int> owners(pairs.size(), 0);
  for (size_t begin = 0; begin < pairs.size();) {
    size_t end = begin;
    while (end < pairs.size() &&
           pairs[end].target_step == pairs[begin].target_step)
      ++end;
    const size_t n = end - begin;
    for (size_t k = 0; k < n; ++k)
      owners[begin + k] = static_cast<int>(k * processes / n);
    begin = end;
  }
  return owners;
}

PartialResult CompareShare(const ComparePlan& plan,
                           const std::vector<int>& owners, int process,
                           const CompareOptions& options,
                           std::optional<CompareColumns> columns) {
  CompareOptions opt = options;
  if (!opt.load_tensor) opt.load_tensor = ReadTensorFile;
  PartialResult part;
  CompareResult sink;  // the share's rows, warnings and gaps
  if (columns) {
    part.header_given = true;
    sink.mode = part.mode = columns->mode;
    part.with_stack = columns->with_stack;
    sink.columns = CompareHeader(part.mode, part.with_stack);
  }
  TimingMark("compare: start");
  for (size_t i = 0; i < plan.pairing.pairs.size(); ++i) {
    if (owners[i] != process) continue;
    part.pairs.push_back(compare_share::ComparePair(plan.pairing.pairs[i], i,
                                                    opt, &part, &sink));
    if (part.pairs.back().kind == PairOutcome::Kind::kFailed) break;
  }
  part.rows = std::move(sink.rows);
  part.warnings = std::move(sink.warnings);
  part.gaps = std::move(sink.gaps);
  return part;
}

}  // namespace lockstep
