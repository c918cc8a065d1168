#include "lockstep/compare/verdict.h"

#include <cmath>
#include <cstdio>

#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace {

void Raise(RowVerdict* v, Verdict level, DivergenceReason reason,
           std::string msg) {
  if (static_cast<int>(level) > static_cast<int>(v->verdict) ||
      (level == v->verdict && v->reason == DivergenceReason::kNone)) {
    v->verdict = level;
    v->reason = reason;
  }
  v->messages.push_back(std::move(msg));
}

std::string Fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", x);
  return buf;
}

// Relative L2 error bound by the least precise dtype of the pair.
double RelL2Bound(const std::string& a, const std::string& b) {
  auto has = [&](const char* d) {
    return a.find(d) != std::string::npos || b.find(d) != std::string::npos;
  };
  if (has("bfloat16") || has("BFloat16")) return 8e-3;
  if (has("float16") || has("Float16")) return 1e-3;
  return 1e-5;
}

bool StatNonFinite(const PyValue& v) {
  if (v.kind() == PyValue::Kind::kFloat) return !std::isfinite(v.as_double());
  return false;
}

void JudgeStatistics(const MsprobeRow& row, RowVerdict* v) {
  const OpRow& a = *row.npu;
  const OpRow& b = *row.bench;
  bool a_bad = StatNonFinite(a.stats[0]) || StatNonFinite(a.stats[1]);
  bool b_bad = StatNonFinite(b.stats[0]) || StatNonFinite(b.stats[1]);
  if (a_bad && !b_bad) {
    bool has_nan = std::isnan(a.stats[0].as_double()) ||
                   std::isnan(a.stats[1].as_double());
    Raise(v, Verdict::kError,
          has_nan ? DivergenceReason::kNan : DivergenceReason::kOverflow,
          has_nan ? "nan in target, not in baseline"
                  : "inf in target, not in baseline");
    return;
  }
  if (!a.is_tensor || !b.is_tensor || a_bad || b_bad) return;
  double rtol = RelL2Bound(a.dtype, b.dtype);
  double scale = std::max(std::fabs(b.stats[0].as_double()),
                          std::fabs(b.stats[1].as_double()));
  static const char* kNames[4] = {"max", "min", "mean", "norm"};
  double worst = 0;
  int worst_k = -1;
  for (int k = 0; k < 4; ++k) {
    if (!a.stats[k].is_number() || !b.stats[k].is_number()) continue;
    double d = std::fabs(a.stats[k].as_double() - b.stats[k].as_double());
    double s = k == 3 ? std::fabs(b.stats[3].as_double()) : scale;
    double e = s > 0 ? d / s : (d > 0 ? INFINITY : 0);
    if (e > worst) {
      worst = e;
      worst_k = k;
    }
  }
  if (worst_k < 0 || worst <= rtol) return;
  std::string msg = std::string(kNames[worst_k]) + " differs by " + Fmt(worst) +
                    " (relative to scale), bound " + Fmt(rtol);
  Raise(v, worst > 10 * rtol ? Verdict::kError : Verdict::kWarning,
        DivergenceReason::kPrecision, msg);
}

void JudgeTensor(const MsprobeRow& row, const TensorPairFacts& f,
                 RowVerdict* v) {
  if (f.unreadable || f.data_missing) {
    Raise(v, Verdict::kError, DivergenceReason::kMissing,
          f.unreadable ? "tensor file unreadable"
                       : "tensor file on one side only");
    return;
  }
  if (f.shape_mismatch) {
    Raise(v, Verdict::kError, DivergenceReason::kShape, "shape differs");
    return;
  }
  if (f.nonfinite_mismatch) {
    bool extra = f.target_nonfinite > f.baseline_nonfinite;
    Raise(v, Verdict::kError,
          extra ? DivergenceReason::kNan : DivergenceReason::kPrecision,
          "inf/nan positions differ (target " +
              std::to_string(f.target_nonfinite) + ", baseline " +
              std::to_string(f.baseline_nonfinite) + ")");
    return;
  }
  if (!f.compared) return;
  double c = f.cosine, e = f.max_abs_err;
  bool cos_ok = !std::isnan(c);
  if ((cos_ok && c < 0.99 && e > 0.001) || (cos_ok && c < 0.9) || e > 1 ||
      std::isnan(e)) {
    Raise(v, Verdict::kError, DivergenceReason::kPrecision,
          "cosine " + (cos_ok ? Fmt(c) : std::string("n/a")) +
              ", max abs err " + Fmt(e));
    return;
  }
  double bound = RelL2Bound(row.npu->dtype, row.bench->dtype);
  if (!std::isnan(f.rel_l2_err) && f.rel_l2_err > bound) {
    Raise(v, Verdict::kWarning, DivergenceReason::kPrecision,
          "relative L2 error " + Fmt(f.rel_l2_err) + " > " + Fmt(bound) +
              " (1 - cosine " + Fmt(f.one_minus_cos) + ", max abs err " +
              Fmt(e) + ")");
  }
}

}  // namespace

RowVerdict JudgeRow(CompareMode mode, const MsprobeRow& row,
                    const TensorPairFacts* facts) {
  RowVerdict v;
  if (row.bench == nullptr) {
    v.verdict = Verdict::kUnmatched;
    v.reason = DivergenceReason::kMissing;
    v.messages.push_back("no baseline row matched");
    return v;
  }
  const OpRow& a = *row.npu;
  const OpRow& b = *row.bench;
  if (a.shape != b.shape)
    Raise(&v, Verdict::kError, DivergenceReason::kShape,
          "shape " + a.shape + " vs " + b.shape);
  if (a.dtype != b.dtype)
    Raise(&v, Verdict::kWarning, DivergenceReason::kDtype,
          "dtype " + a.dtype + " vs " + b.dtype);
  if (!a.is_tensor && !a.is_null && !PyEquals(a.stats[0], b.stats[0])) {
    Raise(&v, Verdict::kError, DivergenceReason::kPrecision,
          "value " + a.stats[0].PyStr() + " vs " + b.stats[0].PyStr());
  }
  if (mode == CompareMode::kMd5) {
    if (row.metrics[0].str != row.metrics[1].str) {
      Raise(&v, Verdict::kError, DivergenceReason::kPrecision,
            "CRC-32 differs");
    }
  } else if (mode == CompareMode::kStatistics || facts == nullptr) {
    JudgeStatistics(row, &v);
  } else {
    JudgeTensor(row, *facts, &v);
  }
  if (!row.metric_message.empty()) v.messages.push_back(row.metric_message);
  for (const auto& m : row.err_messages) v.messages.push_back("msprobe " + m);
  return v;
}

namespace {

// One entry's rows [begin, end) of one (step, rank).
struct EntryScan {
  size_t end = 0;
  bool inputs_ok = true;  // every input row passes
  bool any_matched_input = false;
  int bad_output = -1;  // first output row that does not pass
};

EntryScan ScanEntry(const std::vector<CompareRow>& rows, size_t begin) {
  EntryScan e;
  const CompareRow& head = rows[begin];
  for (e.end = begin; e.end < rows.size(); ++e.end) {
    const CompareRow& r = rows[e.end];
    if (r.entry != head.entry || r.rank != head.rank || r.step != head.step) {
      break;
    }
    bool ok = r.verdict == Verdict::kPass;
    if (!r.is_output) {
      e.any_matched_input |= r.verdict != Verdict::kUnmatched;
      e.inputs_ok &= ok;
    } else if (!ok && e.bad_output < 0) {
      e.bad_output = static_cast<int>(e.end);
    }
  }
  return e;
}

FirstDivergence At(const std::vector<CompareRow>& rows, size_t i,
                   std::string detail) {
  const CompareRow& r = rows[i];
  return {
      true, r.rank, r.step, r.entry, r.npu_name, r.reason, std::move(detail),
      i};
}

std::string JoinMessages(const CompareRow& r) {
  std::string out;
  for (const auto& m : r.messages) out += (out.empty() ? "" : "; ") + m;
  return out;
}

}  // namespace

FirstDivergence FindFirstDivergence(const std::vector<CompareRow>& rows) {
  FirstDivergence best;
  size_t first_bad = rows.size();  // the fallback: earliest non-passing row
  for (size_t i = 0; i < rows.size();) {
    EntryScan e = ScanEntry(rows, i);
    for (size_t j = i; j < e.end && first_bad == rows.size(); ++j) {
      if (rows[j].verdict != Verdict::kPass) first_bad = j;
    }
    if (e.bad_output >= 0) {
      const CompareRow& r = rows[static_cast<size_t>(e.bad_output)];
      bool fully_unmatched =
          !e.any_matched_input && r.verdict == Verdict::kUnmatched;
      bool better = !best.found || r.step < best.step ||
                    (r.step == best.step && r.rank < best.rank);
      if (e.inputs_ok && !fully_unmatched && better) {
        best = At(rows, static_cast<size_t>(e.bad_output), JoinMessages(r));
      }
    }
    i = e.end;
  }
  if (best.found || first_bad == rows.size()) return best;
  return At(rows, first_bad,
            "inputs already differ here and no dumped operator before it "
            "diverged: the change happened outside the dumped operators (an "
            "op left out of the dump, the input data or the weights)");
}

}  // namespace lockstep
