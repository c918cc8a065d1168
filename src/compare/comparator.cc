#include "lockstep/compare/comparator.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <set>
#include <string>
#include <string_view>

#include "lockstep/compare/align.h"
#include "lockstep/compare/checkpoint_compare.h"
#include "lockstep/compare/first_divergence.h"
#include "lockstep/compare/matching.h"
#include "lockstep/compare/model_context.h"
#include "lockstep/compare/msprobe_row.h"
#include "lockstep/compare/op_rows.h"
#include "lockstep/compare/rank_origin.h"
#include "lockstep/compare/result_rules.h"
#include "lockstep/compare/stats_diff.h"
#include "lockstep/compare/tensor_rows.h"
#include "lockstep/compare/verdict.h"
#include "lockstep/core/parallel.h"
#include "lockstep/core/progress.h"
#include "lockstep/format/api_naming.h"

namespace lockstep {
namespace {

std::string Md5Cell(const OpRow* r) {
  if (r == nullptr || r->md5.empty()) return kNA;
  return r->md5;
}

void AddStatCells(const OpRow* r, PackedCellsBuilder* b) {
  for (int i = 0; i < 4; ++i) {
    if (r == nullptr) {
      b->Add(kNA);
    } else {
      StatCell(r->stats[i]).AppendCsv(b->chars());
      b->Close();
    }
  }
}

std::string StackCell(const MsprobeRow& row, const StackMap* stack,
                      bool first_of_entry) {
  if (!first_of_entry || stack == nullptr) return kNA;
  auto it = stack->find(row.npu->entry);
  if (it == stack->end()) return kNA;
  std::vector<PyValue> frames;
  for (const auto& f : it->second) frames.push_back(PyValue::Str(f));
  return PyValue::List(std::move(frames)).PyStr();
}

// The row's cells in CompareHeader's order, through `b` (reused per row).
PackedCells BuildCells(CompareMode mode, const MsprobeRow& row, bool with_stack,
                       const StackMap* stack, bool first_of_entry,
                       PackedCellsBuilder* b) {
  const OpRow& a = *row.npu;
  const OpRow* o = row.bench;
  std::string_view na = kNA;
  b->Add(a.name).Add(o ? std::string_view(o->name) : na);
  b->Add(a.dtype).Add(o ? std::string_view(o->dtype) : na);
  b->Add(a.shape).Add(o ? std::string_view(o->shape) : na);
  b->Add(a.requires_grad).Add(o ? std::string_view(o->requires_grad) : na);
  if (mode == CompareMode::kTensor) {
    for (const Cell& m : row.metrics) m.AppendCsv(b->chars()), b->Close();
  } else if (mode == CompareMode::kStatistics) {
    for (const Cell& m : row.stat_diffs) m.AppendCsv(b->chars()), b->Close();
  } else {
    b->Add(row.metrics[0].str).Add(row.metrics[1].str);
  }
  if (mode != CompareMode::kMd5) {
    AddStatCells(&a, b);
    AddStatCells(o, b);
  }
  b->Add(a.requires_grad == (o ? std::string_view(o->requires_grad) : na)
             ? "True"
             : "False");
  b->Add(MsprobeResultName(row.result));
  b->Add(PyJsonList(row.err_messages));
  if (with_stack) b->Add(StackCell(row, stack, first_of_entry));
  if (mode == CompareMode::kTensor) {
    std::vector<PyValue> names = {
        PyValue::Str(a.data_name),
        PyValue::Str(o ? o->data_name : std::string(kNA))};
    b->Add(PyValue::List(std::move(names)).PyStr());
  }
  return b->Finish();
}

// Worst relative error of the four statistics, as a fraction (plots).
double WorstStatRelErr(const MsprobeRow& row) {
  double worst = std::numeric_limits<double>::quiet_NaN();
  for (int i = 4; i < 8; ++i) {
    double v = 0;
    if (!row.stat_diffs[i].PercentValue(&v)) continue;
    if (std::isnan(worst) || v > worst) worst = v;
  }
  return worst;
}

std::array<double, 4> StatValues(const OpRow& r) {
  std::array<double, 4> v;
  for (int k = 0; k < 4; ++k) {
    v[k] =
        r.stats[k].is_number() ? r.stats[k].as_double() : CompareRow::kNoStat;
  }
  if (!r.is_tensor && r.stats[0].kind() == PyValue::Kind::kBool)
    v[0] = r.stats[0].as_bool() ? 1 : 0;
  return v;
}

StatusOr<CompareMode> DetectModeFrom(const DumpFile& t, const DumpFile& b,
                                     bool tm, bool bm) {
  if (t.task != b.task) {
    return Status::InvalidArgument(t.path + " vs " + b.path,
                                   "dump tasks differ ('" + t.task + "' vs '" +
                                       b.task +
                                       "'). Note: compare two tensor dumps, or "
                                       "two statistics dumps, or pass --mode");
  }
  if (t.task == "tensor") return CompareMode::kTensor;
  if (t.task != "statistics" && t.task != "shadow") {  // shadow: + checks
    return Status::NotSupported(t.path,
                                "task '" + t.task + "' has no data to compare");
  }
  if (tm != bm) {
    return Status::InvalidArgument(
        t.path + " vs " + b.path,
        std::string("md5 (CRC-32) present in the ") +
            (tm ? "target" : "baseline") +
            " only. Note: pass --mode statistics to compare the statistics");
  }
  return tm ? CompareMode::kMd5 : CompareMode::kStatistics;
}

StatusOr<CompareMode> ChooseModeFrom(std::optional<CompareMode> forced,
                                     const DumpFile& t, const DumpFile& b,
                                     bool tm, bool bm) {
  if (!forced) return DetectModeFrom(t, b, tm, bm);
  if (*forced == CompareMode::kMd5) {
    for (const DumpFile* d : {&t, &b}) {
      if (!(d == &t ? tm : bm)) {
        return Status::InvalidArgument(
            d->path,
            "--mode md5: this dump holds no md5 (CRC-32) values. Note: dump "
            "with summary_mode md5, or compare with --mode statistics");
      }
    }
  }
  return *forced;
}

}  // namespace

StatusOr<CompareMode> DetectMode(const DumpFile& t, const DumpFile& b) {
  return DetectModeFrom(t, b, DumpHasMd5(t), DumpHasMd5(b));
}

StatusOr<CompareMode> ChooseMode(std::optional<CompareMode> forced,
                                 const DumpFile& t, const DumpFile& b) {
  return ChooseModeFrom(forced, t, b, DumpHasMd5(t), DumpHasMd5(b));
}

StatusOr<CompareMode> ChooseMode(std::optional<CompareMode> forced,
                                 const FlatDump& t, const FlatDump& b) {
  return ChooseModeFrom(forced, t.file, b.file, t.has_md5, b.has_md5);
}

std::vector<std::string> CompareHeader(CompareMode mode, bool with_stack) {
  std::vector<std::string> h = {"NPU Name",          "Bench Name",
                                "NPU Dtype",         "Bench Dtype",
                                "NPU Tensor Shape",  "Bench Tensor Shape",
                                "NPU Requires_grad", "Bench Requires_grad"};
  if (mode == CompareMode::kTensor) {
    h.insert(h.end(),
             {"Cosine", "EucDist", "MaxAbsErr", "MaxRelativeErr",
              "One Thousandth Err Ratio", "Five Thousandths Err Ratio"});
  } else if (mode == CompareMode::kStatistics) {
    h.insert(h.end(), {"Max diff", "Min diff", "Mean diff", "L2norm diff",
                       "MaxRelativeErr", "MinRelativeErr", "MeanRelativeErr",
                       "NormRelativeErr"});
  } else {
    h.insert(h.end(), {"NPU MD5", "BENCH MD5"});
  }
  if (mode != CompareMode::kMd5) {
    h.insert(h.end(), {"NPU max", "NPU min", "NPU mean", "NPU l2norm",
                       "Bench max", "Bench min", "Bench mean", "Bench l2norm"});
  }
  h.insert(h.end(), {"Requires_grad Consistent", "Result", "Err_message"});
  if (with_stack) h.push_back("NPU_Stack_Info");
  if (mode == CompareMode::kTensor) h.push_back("Data_name");
  return h;
}

namespace {

// True when the two dumps call the same APIs in the same order.
bool SameOpStreams(const std::vector<OpRow>& t, const std::vector<OpRow>& b) {
  // The first row of each entry, in order.
  auto firsts = [](const std::vector<OpRow>& rows) {
    std::vector<const OpRow*> f;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i == 0 || rows[i].entry_index != rows[i - 1].entry_index)
        f.push_back(&rows[i]);
    }
    return f;
  };
  std::vector<const OpRow*> ft = firsts(t), fb = firsts(b);
  if (ft.size() != fb.size()) return false;
  for (size_t i = 0; i < ft.size(); ++i) {
    const std::string& x = ft[i]->entry;
    const std::string& y = fb[i]->entry;
    if (x != y && FuzzyName(x) != FuzzyName(y)) return false;
  }
  return true;
}

// Baseline entries that no target row matched by name: gaps, each placed
// before the first target entry matched to a later baseline entry.
void AddBaselineOnly(const std::vector<OpRow>& t, const std::vector<OpRow>& b,
                     const std::vector<int>& match, const DumpPair& pair,
                     std::vector<AlignmentGap>* gaps) {
  size_t n = b.empty() ? 0 : b.back().entry_index + 1;
  // first[e]: the earliest target entry (ordinal) matched to baseline entry
  // e, then to any entry after e (a suffix minimum); `none` if there is none.
  const size_t none = std::numeric_limits<size_t>::max();
  std::vector<size_t> first(n + 1, none);
  size_t ord = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0 && t[i].entry_index != t[i - 1].entry_index) ++ord;
    if (match[i] < 0) continue;
    size_t e = b[static_cast<size_t>(match[i])].entry_index;
    if (e < n) first[e] = std::min(first[e], ord);
  }
  std::vector<bool> used(n);
  for (size_t e = 0; e < n; ++e) used[e] = first[e] != none;
  for (size_t e = n; e-- > 0;) first[e] = std::min(first[e], first[e + 1]);
  size_t target_entries = t.empty() ? 0 : ord + 1;
  size_t position = 0;
  for (size_t j = 0; j < b.size(); ++j) {
    if (j > 0 && b[j].entry_index == b[j - 1].entry_index) continue;
    size_t e = b[j].entry_index;
    if (!used[e]) {
      size_t before = first[e + 1] == none ? target_entries : first[e + 1];
      gaps->push_back(
          {b[j].entry, false, pair.rank, position, pair.step, before});
    }
    ++position;
  }
}

// The target rows under the names msprobe's -am or -cm matches them by (a
// row that mapping leaves unmatched gets a name no baseline row has). Each
// row's entry is its mapped name less the part after the entry.
std::vector<OpRow> NameMappedRows(const std::vector<OpRow>& t,
                                  const std::vector<OpRow>& b,
                                  const CompareOptions& options) {
  std::vector<OpRow> out = t;
  std::vector<std::string> user;
  if (options.api_mapping_entries)
    user = UserApiMappedNames(*options.api_mapping_entries, t, b);
  for (size_t k = 0; k < out.size(); ++k) {
    OpRow& r = out[k];
    std::optional<std::string> name =
        !user.empty() ? std::move(user[k])
        : options.api_mapping
            ? std::optional<std::string>(MsApiMappedName(r.name))
            : CellMappedName(r.name, *options.cell_mapping);
    if (!name) name = "\x01unmatched." + r.name;
    std::string rest = r.name.starts_with(r.entry)
                           ? r.name.substr(r.entry.size())
                           : std::string();
    r.entry = name->ends_with(rest)
                  ? name->substr(0, name->size() - rest.size())
                  : *name;
    r.name = std::move(*name);
  }
  return out;
}

std::vector<int> MatchFor(const std::vector<OpRow>& t,
                          const std::vector<OpRow>& b, const DumpPair& pair,
                          const CompareOptions& options,
                          CompareResult* result) {
  bool name_mapped = options.api_mapping || options.cell_mapping != nullptr;
  bool mapped = name_mapped || (options.data_mapping != nullptr &&
                                !options.data_mapping->empty());
  bool align = !options.fuzzy_match && !mapped &&
               (options.align == AlignMode::kOn ||
                (options.align == AlignMode::kAuto && !SameOpStreams(t, b)));
  if (align) {
    if (options.align == AlignMode::kAuto) {
      result->warnings.push_back(
          "step " + std::to_string(pair.step) + " rank " +
          std::to_string(pair.rank) +
          ": the op streams differ (ops inserted, removed, fused or "
          "decomposed): aligned them; --no-align matches by name as msprobe "
          "does");
    }
    std::optional<std::vector<int>> aligned =
        AlignRows(t, b, pair.rank, pair.step, &result->gaps);
    if (aligned) return std::move(*aligned);
    result->warnings.push_back(
        "step " + std::to_string(pair.step) + " rank " +
        std::to_string(pair.rank) +
        ": the op streams are too different to "
        "align (more than " +
        std::to_string(kMaxAlignEdits) +
        " entries inserted or removed): matched by name");
  }
  MatchOptions mo;
  mo.fuzzy = options.fuzzy_match;
  mo.fuzzy_rule = options.fuzzy_rule;
  mo.renumber_params_grad = options.renumber_params_grad;
  mo.data_mapping = options.data_mapping.get();
  std::vector<int> match = name_mapped
                               ? MatchRows(NameMappedRows(t, b, options), b, mo)
                               : MatchRows(t, b, mo);
  AddBaselineOnly(t, b, match, pair, &result->gaps);
  return match;
}

// Fills each row's mode cells; returns the tensor facts (tensor mode only).
std::vector<TensorPairFacts> FillModeCells(const DumpPair& pair,
                                           const CompareOptions& options,
                                           CompareResult* result,
                                           std::vector<MsprobeRow>* rows) {
  switch (result->mode) {
    case CompareMode::kStatistics:
      for (auto& r : *rows) ComputeStatDiffs(&r);
      return {};
    case CompareMode::kMd5:
      for (auto& r : *rows) {
        r.metrics = {Cell::Str(Md5Cell(r.npu)), Cell::Str(Md5Cell(r.bench))};
      }
      return {};
    case CompareMode::kTensor:
      break;
  }
  return CompareTensorRows(*pair.target, *pair.baseline, options, rows,
                           &result->warnings);
}

// Whether a row is the tensor a call overwrites whole before reading it
// (self of copy_, fill_, zero_ and the in-place random fills): what it held
// before the call says nothing (DDP's reducer copies into an uninitialised
// buffer), so it is not judged.
bool OverwrittenInput(const CompareRow& r) {
  std::string_view name = r.npu_name();
  if (!r.is_input || !name.ends_with(".input.0")) return false;
  if (!r.entry.ends_with(".forward")) return false;  // "Tensor.copy_.3.forward"
  static const auto* apis = new std::set<std::string, std::less<>>{
      "copy_",      "fill_",   "zero_",      "normal_",
      "uniform_",   "random_", "bernoulli_", "exponential_",
      "geometric_", "cauchy_", "log_normal_"};
  return apis->count(EntryApi(r.entry)) > 0;
}

// The output row for one msprobe row: cells, verdict and numeric view.
CompareRow MakeRow(CompareMode mode, const MsprobeRow& r,
                   const TensorPairFacts* facts, const DumpPair& pair,
                   bool with_stack, bool first_of_entry,
                   PackedCellsBuilder* cells) {
  CompareRow out;
  out.cells =
      BuildCells(mode, r, with_stack, pair.target_stack, first_of_entry, cells);
  out.rank = pair.rank;
  out.step = pair.step;
  out.is_output = IsOutputRow(*r.npu);
  RowVerdict v = JudgeRow(mode, r, facts);
  out.verdict = v.verdict;
  out.messages = std::move(v.messages);
  out.reason = v.reason;
  if (facts != nullptr) {
    out.cosine = facts->cosine;
    out.max_abs_err = facts->max_abs_err;
    out.max_rel_err = facts->max_rel_err;
    out.one_minus_cos = facts->one_minus_cos;
  } else if (mode == CompareMode::kStatistics) {
    out.max_rel_err = WorstStatRelErr(r);
  }
  out.msprobe_result = MsprobeResultName(r.result);
  RowError e = EstimateRowError(mode, r, facts);
  out.error = e.error;
  out.floor = e.floor;
  out.aggregate_error = e.aggregate_error;
  out.is_input =
      r.npu->state == RowState::kInput || r.npu->state == RowState::kParameters;
  out.is_tensor = r.npu->is_tensor;
  out.target_stats = StatValues(*r.npu);
  if (r.bench != nullptr) out.baseline_stats = StatValues(*r.bench);
  return out;
}

}  // namespace

Status CompareRankPair(const DumpPair& pair, const CompareOptions& options,
                       CompareResult* result) {
  std::vector<OpRow> trows = pair.target_rows != nullptr
                                 ? std::move(*pair.target_rows)
                                 : FlattenDump(*pair.target);
  std::vector<OpRow> brows = pair.baseline_rows != nullptr
                                 ? std::move(*pair.baseline_rows)
                                 : FlattenDump(*pair.baseline);
  std::vector<int> match = pair.match != nullptr
                               ? *pair.match
                               : MatchFor(trows, brows, pair, options, result);
  TimingMark("compare: match rows");
  bool with_stack = std::find(result->columns.begin(), result->columns.end(),
                              "NPU_Stack_Info") != result->columns.end();
  // Rows go through msprobe's arithmetic a block of whole entries at a time
  // (its rules look at one entry's rows together), so that the msprobe
  // rows of a block are all that exist at once; blocks run in parallel,
  // each filling its own slots of result->rows. Tensor mode takes all rows
  // in one block: its metrics run in parallel over them.
  const bool tensor = result->mode == CompareMode::kTensor;
  const size_t block = tensor ? std::max<size_t>(trows.size(), 1) : 4096;
  std::vector<std::pair<size_t, size_t>> blocks;
  for (size_t lo = 0; lo < trows.size();) {
    size_t hi = std::min(trows.size(), lo + block);
    while (hi < trows.size() &&
           trows[hi].entry_index == trows[hi - 1].entry_index)
      ++hi;
    blocks.emplace_back(lo, hi);
    lo = hi;
  }
  const size_t base = result->rows.size();
  result->rows.resize(base + trows.size());
  std::atomic<size_t> rows_done{0};
  auto run_block = [&](size_t k) {
    auto [lo, hi] = blocks[k];
    std::vector<MsprobeRow> rows(hi - lo);
    for (size_t i = lo; i < hi; ++i) {
      rows[i - lo].npu = &trows[i];
      if (match[i] >= 0)
        rows[i - lo].bench = &brows[static_cast<size_t>(match[i])];
    }
    // Only tensor mode (one block, never run concurrently) adds warnings.
    std::vector<TensorPairFacts> facts =
        FillModeCells(pair, options, result, &rows);
    ApplyMsprobeRules(result->mode, &rows);
    PackedCellsBuilder cells;
    for (size_t i = lo; i < hi; ++i) {
      // By entry_index: the entry names of rows made already are moved out.
      bool first = i == 0 || trows[i - 1].entry_index != trows[i].entry_index;
      CompareRow& out = result->rows[base + i];
      out = MakeRow(result->mode, rows[i - lo],
                    facts.empty() ? nullptr : &facts[i - lo], pair, with_stack,
                    first, &cells);
      // The target row is not read again: its entry name moves to the row.
      out.entry = std::move(trows[i].entry);
      if (rows[i - lo].bench != nullptr && OverwrittenInput(out)) {
        out.verdict = Verdict::kPass;
        out.reason = DivergenceReason::kNone;
        out.error = 0;
        out.aggregate_error = 0;
        out.messages = {
            "overwritten by the call: its contents before it "
            "are not compared"};
      }
    }
    // Tensor mode says its own progress as each tensor pair is compared.
    if (!tensor && options.progress)
      options.progress(rows_done += hi - lo, trows.size());
  };
  TimingMark("compare: prepare rows");
  ParallelFor(blocks.size(), tensor ? 1 : HardwareThreads(), run_block);
  TimingMark("compare: make rows");
  return Status::Ok();
}

void FinishResult(CompareResult* result) {
  CompareSummary s;
  for (const CompareRow& r : result->rows) {
    ++s.rows;
    switch (r.verdict) {
      case Verdict::kPass:
        ++s.pass;
        break;
      case Verdict::kWarning:
        ++s.warning;
        break;
      case Verdict::kError:
        ++s.error;
        break;
      case Verdict::kUnmatched:
        ++s.unmatched;
        break;
    }
    if (r.msprobe_result == "pass") ++s.msprobe_pass;
    if (r.msprobe_result == "warning") ++s.msprobe_warning;
    if (r.msprobe_result == "error") ++s.msprobe_error;
  }
  result->summary = s;
  if (result->subject == CompareSubject::kCheckpoints) {
    result->largest_errors = LargestErrors(*result, kLargestErrors);
    return;
  }
  // Several ranks: the first divergence is where the divergence across
  // them started (rank_origin.h), not the lowest rank's own.
  FirstDivergence at_origin;
  result->origin =
      FindRankOrigin(result->rows, result->gaps, result->collectives,
                     &result->warnings, &at_origin);
  result->first_divergence =
      result->origin.analyzed ? std::move(at_origin)
                              : FindFirstDivergence(result->rows, result->gaps);
  AttachDivergenceStack(result);
}

}  // namespace lockstep
