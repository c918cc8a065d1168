// Synthetic comparison results for the report tests: deterministic rows with
// mixed verdicts, msprobe's column layout, a first divergence and gaps.
#ifndef LOCKSTEP_TESTS_REPORT_SYNTHETIC_RESULT_H_
#define LOCKSTEP_TESTS_REPORT_SYNTHETIC_RESULT_H_

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "lockstep/compare/result.h"

namespace lockstep::testing {

inline std::vector<std::string> TensorColumns() {
  return {"NPU Name",
          "Bench Name",
          "NPU Dtype",
          "Bench Dtype",
          "NPU Tensor Shape",
          "Bench Tensor Shape",
          "NPU Requires_grad",
          "Bench Requires_grad",
          "Cosine",
          "EucDist",
          "MaxAbsErr",
          "MaxRelativeErr",
          "One Thousandth Err Ratio",
          "Five Thousandths Err Ratio",
          "NPU max",
          "NPU min",
          "NPU mean",
          "NPU l2norm",
          "Bench max",
          "Bench min",
          "Bench mean",
          "Bench l2norm",
          "Requires_grad Consistent",
          "Result",
          "Err_message",
          "NPU_Stack_Info",
          "Data_name"};
}

inline std::string Num(double x) {
  if (std::isnan(x)) return "N/A";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.12g", x);
  return buf;
}

// The verdict pattern: errors cluster after row `n * 2 / 5` (the first
// divergence); warnings and unmatched rows are sprinkled everywhere.
inline Verdict SyntheticVerdict(size_t i, size_t n) {
  size_t fd = n * 2 / 5 / 3 * 3 + 2;
  if (i == fd || (i > fd && i % 11 == 2)) return Verdict::kError;
  if (i % 53 == 3) return Verdict::kUnmatched;
  if (i % 41 == 7) return Verdict::kWarning;
  return Verdict::kPass;
}

inline void FillMetrics(size_t i, CompareRow* row) {
  switch (row->verdict) {
    case Verdict::kPass:
      row->one_minus_cos = 1e-7 * static_cast<double>(1 + i % 13);
      row->max_abs_err = 1e-5 * static_cast<double>(1 + i % 5);
      break;
    case Verdict::kWarning:
      row->one_minus_cos = 0.004;
      row->max_abs_err = 0.01;
      break;
    case Verdict::kError:
      row->one_minus_cos = 0.02 + 0.3 * static_cast<double>(i % 7) / 7;
      row->max_abs_err = 0.5 + static_cast<double>(i % 3);
      break;
    case Verdict::kUnmatched:
      return;
  }
  row->cosine = 1 - row->one_minus_cos;
  row->max_rel_err = row->max_abs_err * 3;
}

inline void FillCells(const CompareRow& r, const std::string& npu_name,
                      std::vector<std::string>* c) {
  bool matched = r.verdict != Verdict::kUnmatched;
  *c = {npu_name,
        matched ? npu_name : "N/A",
        "torch.float32",
        matched ? "torch.float32" : "N/A",
        "[32, 64]",
        matched ? "[32, 64]" : "N/A",
        "True",
        matched ? "True" : "N/A",
        Num(r.cosine),
        Num(r.max_abs_err * 4),
        Num(r.max_abs_err),
        Num(r.max_rel_err),
        matched ? "1.0" : "N/A",
        matched ? "1.0" : "N/A",
        "2.5",
        "-2.5",
        "0.01",
        "12.5",
        matched ? "2.5" : "N/A",
        matched ? "-2.5" : "N/A",
        matched ? "0.01" : "N/A",
        matched ? "12.5" : "N/A",
        matched ? "True" : "False",
        r.verdict == Verdict::kError     ? "error"
        : r.verdict == Verdict::kWarning ? "warning"
                                         : "pass",
        "[]",
        "N/A",
        "['" + npu_name + ".pt', '" + (matched ? npu_name : "N/A") + ".pt']"};
}

inline void Tally(CompareResult* r) {
  CompareSummary& s = r->summary;
  s = CompareSummary();
  for (const CompareRow& row : r->rows) {
    ++s.rows;
    switch (row.verdict) {
      case Verdict::kPass:
        ++s.pass;
        ++s.msprobe_pass;
        break;
      case Verdict::kWarning:
        ++s.warning;
        ++s.msprobe_warning;
        break;
      case Verdict::kError:
        ++s.error;
        ++s.msprobe_error;
        break;
      case Verdict::kUnmatched:
        ++s.unmatched;
        ++s.msprobe_pass;
        break;
    }
  }
}

inline void SetFirstDivergence(CompareResult* r) {
  for (size_t i = 0; i < r->rows.size(); ++i) {
    const CompareRow& row = r->rows[i];
    if (row.verdict != Verdict::kError) continue;
    FirstDivergence& fd = r->first_divergence;
    fd = {true,
          row.rank,
          row.step,
          row.entry,
          std::string(row.npu_name()),
          DivergenceReason::kPrecision,
          "cosine " + Num(row.cosine) + " < 0.99, max abs err " +
              Num(row.max_abs_err),
          i,
          /*drift=*/false,
          /*stack=*/{}};
    return;
  }
}

// `n` rows in tensor mode: 3 rows (input.0, input.1, output.0) per entry.
inline CompareResult MakeSyntheticResult(size_t n) {
  static const char* kOps[] = {"Functional.conv2d", "Functional.linear",
                               "Torch.matmul",      "Tensor.add",
                               "Functional.relu",   "Functional.layer_norm"};
  CompareResult r;
  r.mode = CompareMode::kTensor;
  r.columns = TensorColumns();
  r.target_path = "/data/npu_run/step0/rank0/dump.json";
  r.baseline_path = "/data/gpu_run/step0/rank0/dump.json";
  for (size_t i = 0; i < n; ++i) {
    CompareRow row;
    size_t e = i / 3;
    row.entry =
        std::string(kOps[e % 6]) + "." + std::to_string(e / 6) + ".forward";
    std::string npu_name =
        row.entry +
        (i % 3 == 2 ? ".output.0" : ".input." + std::to_string(i % 3));
    row.step = 0;
    row.is_output = i % 3 == 2;
    row.verdict = SyntheticVerdict(i, n);
    FillMetrics(i, &row);
    if (row.verdict != Verdict::kPass)
      row.messages = {"synthetic " + std::string(VerdictName(row.verdict))};
    std::vector<std::string> cells;
    FillCells(row, npu_name, &cells);
    row.cells = PackedCells(cells);
    r.rows.push_back(std::move(row));
  }
  Tally(&r);
  SetFirstDivergence(&r);
  r.gaps = {{"Functional.dropout.0.forward", true, 0, 17},
            {"Tensor.mul.3.forward", false, 0, 40}};
  r.warnings = {"rank 0: stack.json missing; NPU_Stack_Info left N/A"};
  return r;
}

inline size_t CountVerdict(const CompareResult& r, Verdict v) {
  size_t n = 0;
  for (const CompareRow& row : r.rows) n += row.verdict == v;
  return n;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_REPORT_SYNTHETIC_RESULT_H_
