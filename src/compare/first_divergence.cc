// The first divergent operator (first_divergence.h): each rank's entries
// walked in execution order, step by step, carrying what was seen
// (RankWalker), and the earliest culprit across ranks. What the walk reads
// from entry names and rows is in first_divergence_rows.cc.
#include "lockstep/compare/first_divergence.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compare/first_divergence_internal.h"

namespace lockstep {
namespace divergence_detail {
namespace {

struct Span {
  size_t begin, end;  // positions in the rank's row index list
};

// Walks one rank's entries in order; the state is what was seen before.
class RankWalker {
 public:
  RankWalker(const std::vector<CompareRow>& rows,
             const std::vector<size_t>& order,
             const AlignmentGap* first_missing,
             const std::vector<bool>* ignored_inputs)
      : rows_(rows),
        order_(order),
        first_missing_(first_missing),
        ignored_inputs_(ignored_inputs) {
    outputs_.reserve(order.size());
  }

  // The first divergence. When it is a missing or inserted call (the op
  // streams differ: a fused op, a foreach optimizer), the walk goes on past
  // it, and its detail says what the matched calls after it show: the
  // first one that diverges, or that they all agree.
  std::optional<FirstDivergence> Walk() {
    int step = INT32_MIN;
    size_t entry_in_step = 0;
    std::optional<FirstDivergence> gap;
    size_t agreeing = 0;     // matched entries judged after the gap
    size_t not_passing = 0;  // and their rows that do not pass
    for (size_t i = 0; i < order_.size();) {
      Span s{i, i};
      const CompareRow& head = Row(i);
      while (s.end < order_.size() && Row(s.end).entry == head.entry &&
             Row(s.end).step == head.step) {
        ++s.end;
      }
      if (head.step != step) {
        step = head.step;
        entry_in_step = 0;
        first_step_ = head.step == Row(0).step;
      }
      if (const AlignmentGap* g = first_missing_;  // missing before this?
          !gap && g &&
          (g->step < step ||
           (g->step == step && g->target_position <= entry_in_step))) {
        gap = Missing(*g, order_[s.begin]);
      }
      if (auto f = Judge(s)) {
        if (!gap) {
          if (f->reason != DivergenceReason::kMissing) return f;
          gap = std::move(f);
        } else if (f->reason != DivergenceReason::kMissing) {
          gap->detail +=
              "; the first matched call after it that diverges: " + f->entry +
              " (step " + std::to_string(f->step) + ", " +
              DivergenceReasonName(f->reason) + ")";
          return gap;
        }
      } else if (gap) {
        ++agreeing;
        for (size_t p = s.begin; p < s.end; ++p)
          not_passing += Row(p).verdict != Verdict::kPass;
      }
      if (InPlace(head.entry)) {
        last_in_place_ = head.entry;
        last_in_place_step_ = head.step;
      }
      ++entry_in_step;
      i = s.end;
    }
    if (!gap && first_missing_) {
      gap = Missing(*first_missing_, order_.empty() ? 0 : order_.back());
    }
    if (gap && agreeing > 0 && not_passing == 0) {
      gap->detail += "; the " + std::to_string(agreeing) +
                     " matched calls after it all agree: the calls differ, "
                     "their results do not";
    } else if (gap && agreeing > 0) {
      gap->detail += "; none of the " + std::to_string(agreeing) +
                     " matched calls after it diverges by more than its "
                     "inputs explain, yet " +
                     std::to_string(not_passing) +
                     " of their rows do not pass: the results drift apart "
                     "from here";
    }
    return gap;
  }

  // Inserted calls that return their input, walked past (not named): "X
  // (step 0), Y (step 1)", at most 3 and a count.
  std::string Harmless() const {
    std::string out;
    for (size_t i = 0; i < harmless_.size() && i < 3; ++i)
      out += (i ? ", " : "") + harmless_[i];
    if (harmless_.size() > 3)
      out += " and " + std::to_string(harmless_.size() - 3) + " more";
    return out;
  }

 private:
  const CompareRow& Row(size_t pos) const { return rows_[order_[pos]]; }
  bool Ignored(size_t pos) const {
    return ignored_inputs_ != nullptr && (*ignored_inputs_)[order_[pos]];
  }

  FirstDivergence At(size_t pos, DivergenceReason reason,
                     std::string detail) const {
    const CompareRow& r = Row(pos);
    return {true,
            r.rank,
            r.step,
            r.entry,
            std::string(r.npu_name()),
            reason,
            std::move(detail),
            order_[pos],
            false,
            {}};
  }

  FirstDivergence Missing(const AlignmentGap& g, size_t near_row) const {
    const CompareRow& r = rows_[near_row];
    return {true,
            g.rank,
            g.step,
            g.entry,
            "",
            DivergenceReason::kMissing,
            "in the baseline only: the target does not call it (before " +
                r.entry + " in the target)",
            near_row,
            false,
            {}};
  }

  // The latest earlier output that was this input in the baseline.
  std::optional<size_t> Producer(const CompareRow& in) const {
    auto range = outputs_.equal_range(StatsKey(in.baseline_stats));
    std::optional<size_t> best;
    for (auto it = range.first; it != range.second; ++it) {
      const CompareRow& o = rows_[it->second];
      if (SameStats(o.baseline_stats, in.baseline_stats) &&
          (!best || it->second > *best)) {
        best = it->second;
      }
    }
    return best;
  }

  std::optional<FirstDivergence> Judge(const Span& s) {
    const CompareRow& head = Row(s.begin);
    bool all_unmatched = true;
    for (size_t p = s.begin; p < s.end; ++p)
      all_unmatched &= Row(p).verdict == Verdict::kUnmatched;
    if (all_unmatched) {
      if (ReturnsAnInput(s)) {  // `x * 1.0`, `x.float()` of a float
        harmless_.push_back(head.entry + " (step " + std::to_string(head.step) +
                            ")");
        return std::nullopt;
      }
      return At(s.begin, DivergenceReason::kMissing,
                "in the target only: no baseline entry matches it (an "
                "inserted op, or one named differently)");
    }
    if (GivesOnlyAgreeingValues(s)) return std::nullopt;
    double in_err = 0;
    bool any_input = false;
    for (size_t p = s.begin; p < s.end; ++p) {
      const CompareRow& r = Row(p);
      if (!r.is_input || !Known(r.error) || Ignored(p)) continue;
      any_input = true;
      if (auto f = JudgeInput(p)) return f;
      in_err = std::max(in_err, r.error);
    }
    if (auto f = JudgeDtype(s)) return f;
    std::string fwd = ForwardOf(head.entry);
    if (!fwd.empty()) {
      auto it = forward_err_.find(fwd);
      if (it != forward_err_.end()) in_err = std::max(in_err, it->second);
    }
    if (!any_input) in_err = std::max(in_err, seen_err_);
    double out_err = 0, floor = 0;
    std::optional<size_t> worst;
    for (size_t p = s.begin; p < s.end; ++p) {
      const CompareRow& r = Row(p);
      if (r.is_input || !Known(r.error)) continue;
      floor = std::max(floor, r.floor);
      // Where the inputs differ, an output's max and min (one element
      // each) move by their largest elementwise difference, which the
      // inputs' statistics do not show: only the mean and norm weigh.
      double e =
          in_err > 0 && Known(r.aggregate_error) ? r.aggregate_error : r.error;
      if (!worst || e > out_err) {
        out_err = e;
        worst = p;
      }
    }
    bool explained = in_err > 0 && UnboundedAmplifier(head.entry);
    if (worst && !explained && out_err > floor &&
        out_err > kAmplification * in_err + floor) {
      const CompareRow& r = Row(*worst);
      std::string detail = "output error " + Fmt(out_err) +
                           " where its inputs' error " + Fmt(in_err) +
                           " explains at most " +
                           Fmt(kAmplification * in_err + floor);
      for (const auto& m : r.messages) detail += "; " + m;
      return At(*worst,
                r.reason == DivergenceReason::kNone
                    ? DivergenceReason::kPrecision
                    : r.reason,
                detail);
    }
    Remember(s, std::max(in_err, out_err), fwd.empty());
    return std::nullopt;
  }

  // An op whose output dtype differs while every input's is the same on
  // both sides: it computes in another precision (a linear under
  // autocast, a softmax in bfloat16), whatever its statistics show (a
  // bfloat16 tensor's are recorded in bfloat16, and round away a change).
  std::optional<FirstDivergence> JudgeDtype(const Span& s) const {
    std::optional<size_t> changed;
    for (size_t p = s.begin; p < s.end; ++p) {
      const CompareRow& r = Row(p);
      if (r.verdict == Verdict::kUnmatched || DtypeMessage(r).empty()) continue;
      if (r.is_input) return std::nullopt;  // the change came in with it
      if (!changed) changed = p;
    }
    if (!changed) return std::nullopt;
    const CompareRow& r = Row(*changed);
    return At(*changed, DivergenceReason::kDtype,
              "output " + std::string(DtypeMessage(r)) +
                  " where its inputs' dtypes are the same: it computes in "
                  "another precision");
  }

  // A call whose outputs are all plain values (no tensor) that agree on
  // both sides, such as `result_type(500000.0, x)`: it hands on nothing
  // that differs, whatever its arguments; the calls that use those
  // arguments (the `pow` after it) show them themselves.
  bool GivesOnlyAgreeingValues(const Span& s) const {
    bool any_output = false;
    for (size_t p = s.begin; p < s.end; ++p) {
      const CompareRow& o = Row(p);
      if (o.is_input) continue;
      if (o.is_tensor || o.verdict == Verdict::kUnmatched ||
          !SameStats(o.target_stats, o.baseline_stats)) {
        return false;
      }
      any_output = true;
    }
    return any_output;
  }

  // An entry whose every tensor output has exactly the statistics of one
  // of its tensor inputs (in the target): it returns its input's numbers,
  // and changes nothing downstream. A None output (msprobe's backward of
  // `x * 1.0` has no gradient for the 1.0) carries nothing.
  bool ReturnsAnInput(const Span& s) const {
    bool any_output = false;
    for (size_t p = s.begin; p < s.end; ++p) {
      const CompareRow& o = Row(p);
      if (o.is_input) continue;
      if (!o.is_tensor && std::isnan(o.target_stats[0])) continue;
      if (!o.is_tensor || std::isnan(o.target_stats[0])) return false;
      any_output = true;
      bool equal = false;
      for (size_t q = s.begin; q < s.end && !equal; ++q) {
        const CompareRow& in = Row(q);
        equal =
            in.is_input && in.is_tensor && in.target_stats == o.target_stats;
      }
      if (!equal) return false;
    }
    return any_output;
  }

  std::optional<FirstDivergence> JudgeInput(size_t p) const {
    const CompareRow& r = Row(p);
    // Runs identical so far (every error seen is exactly 0): a tensor
    // input no dumped op produced that differs at all, below the rounding
    // floor too, is the change itself (one parameter element x1.001).
    // So is one whose dtype alone differs (a float64 `arange` that no
    // dumped op made, where the baseline's is float32).
    bool dtype_only = seen_err_ == 0 && r.is_tensor && !(r.error > 0) &&
                      !DtypeMessage(r).empty();
    bool exact_so_far = seen_err_ == 0 && (DiffersAtAll(r) || dtype_only);
    if (r.error <= r.floor && !exact_so_far) return std::nullopt;
    std::optional<size_t> prod = Producer(r);
    if (!r.is_tensor) {
      if (prod && SameStats(rows_[*prod].target_stats, r.target_stats))
        return std::nullopt;  // the value an earlier op returned
      std::string detail = ArgumentName(r) + ": " + TargetVsBaseline(r);
      return At(p, DivergenceReason::kArgument, detail);
    }
    if (prod) {
      const CompareRow& o = rows_[*prod];
      if (SameStats(o.target_stats, r.target_stats)) return std::nullopt;
      return At(p, DivergenceReason::kInput,
                "input " + InputName(r) + " (error " + Fmt(r.error) +
                    ") is not what " + o.entry +
                    " returned in the target, as it was in the baseline: it "
                    "changed between the two (a gradient hook, an in-place "
                    "change or an op outside the dump)");
    }
    double seen = std::max(seen_err_, r.floor);
    if (r.error <= kInputJump * seen && !exact_so_far) return std::nullopt;
    std::string what =
        "input " + InputName(r) + OneValueEach(r) +
        (dtype_only ? " differs in " + std::string(DtypeMessage(r)) + " alone"
                    : " differs (error " + Fmt(r.error) + ")");
    if (seen_err_ == 0 && r.entry.starts_with("Module.")) {
      // L0: module entries only; what runs between modules is not dumped.
      what +=
          " before any dumped module diverged: no dumped module "
          "returned it (the model's input, a parameter, or a value "
          "computed outside the dumped modules)";
    } else if (seen_err_ == 0) {
      what += std::string(" before any dumped operator diverged") +
              (first_step_ ? " and before the first step" : "") +
              ": no dumped op produced it (a parameter or the input data: "
              "a changed initialisation or checkpoint?)";
    } else {
      what += ", more than " + Fmt(kInputJump) + "x any error before it (" +
              Fmt(seen_err_) +
              "), and no dumped op produced it: it changed outside the "
              "dumped operators";
    }
    if (!last_in_place_.empty() && last_in_place_step_ < r.step) {
      what +=
          ", or in an in-place call of an earlier step, which records no "
          "output (the last: " +
          last_in_place_ +
          "): an optimizer's update differs there when its gradients do";
    }
    return At(p,
              dtype_only ? DivergenceReason::kDtype : DivergenceReason::kInput,
              what);
  }

  void Remember(const Span& s, double err, bool forward) {
    seen_err_ = std::max(seen_err_, err);
    for (size_t p = s.begin; p < s.end; ++p) {
      const CompareRow& r = Row(p);
      if (r.is_input || std::isnan(r.baseline_stats[0])) continue;
      outputs_.emplace(StatsKey(r.baseline_stats), order_[p]);
    }
    if (forward) forward_err_[Row(s.begin).entry] = err;
  }

  const std::vector<CompareRow>& rows_;
  const std::vector<size_t>& order_;
  const AlignmentGap* first_missing_;        // the rank's earliest; may be null
  const std::vector<bool>* ignored_inputs_;  // may be null
  double seen_err_ = 0;
  bool first_step_ = true;
  // The last in-place call walked past, and its step.
  std::string last_in_place_;
  int last_in_place_step_ = 0;
  std::unordered_multimap<uint64_t, size_t> outputs_;
  // Inserted calls that return their input ("entry (step s)").
  std::vector<std::string> harmless_;
  // Keyed by views of the rows' entry names (the rows outlive the walk).
  std::unordered_map<std::string_view, double> forward_err_;
};

}  // namespace
}  // namespace divergence_detail

std::vector<FirstDivergence> FindRankDivergences(
    const std::vector<CompareRow>& rows, const std::vector<AlignmentGap>& gaps,
    const std::vector<bool>* ignored_inputs) {
  std::map<int, std::vector<size_t>> by_rank;
  for (size_t i = 0; i < rows.size(); ++i) by_rank[rows[i].rank].push_back(i);
  std::vector<FirstDivergence> out;
  for (auto& [rank, order] : by_rank) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return rows[a].step < rows[b].step;
    });
    const AlignmentGap* first_missing = nullptr;
    for (const AlignmentGap& g : gaps) {
      if (g.rank != rank || g.in_target) continue;
      if (!first_missing || g.step < first_missing->step ||
          (g.step == first_missing->step &&
           g.target_position < first_missing->target_position)) {
        first_missing = &g;
      }
    }
    divergence_detail::RankWalker walker(rows, order, first_missing,
                                         ignored_inputs);
    std::optional<FirstDivergence> f = walker.Walk();
    if (f) {
      if (std::string h = walker.Harmless(); !h.empty()) {
        f->detail +=
            "; before it, calls in the target only that return "
            "their input (not the cause): " +
            h;
      }
      out.push_back(std::move(*f));
    }
  }
  return out;
}

FirstDivergence FindFirstDivergence(const std::vector<CompareRow>& rows,
                                    const std::vector<AlignmentGap>& gaps,
                                    const std::vector<bool>* ignored_inputs) {
  FirstDivergence best;
  for (FirstDivergence& f : FindRankDivergences(rows, gaps, ignored_inputs)) {
    if (!best.found || f.step < best.step) best = std::move(f);
  }
  if (best.found) return best;
  for (size_t i = 0; i < rows.size(); ++i) {
    // Unmatched rows the walk did not name are calls in the target only
    // that return their input: not a divergence.
    if (rows[i].verdict == Verdict::kPass ||
        rows[i].verdict == Verdict::kUnmatched) {
      continue;
    }
    if (ignored_inputs != nullptr && (*ignored_inputs)[i]) continue;
    const CompareRow& r = rows[i];
    std::string detail = divergence_detail::JoinMessages(r);
    detail += std::string(detail.empty() ? "" : "; ") +
              "no operator's error exceeds what its inputs explain: the "
              "runs drift apart by accumulated rounding, or the change "
              "happened outside the dumped operators";
    return {true,     r.rank, r.step, r.entry, std::string(r.npu_name()),
            r.reason, detail, i,      true,    {}};
  }
  return best;
}

}  // namespace lockstep
