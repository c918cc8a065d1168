// The rows the first-divergence rule tests build by hand
// (divergence_rule_test.cc, divergence_gaps_test.cc): one (step, rank)
// stream of tensor and number rows, and four tensors' statistics.
#ifndef LOCKSTEP_TESTS_COMPARE_DIVERGENCE_TESTING_H_
#define LOCKSTEP_TESTS_COMPARE_DIVERGENCE_TESTING_H_

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/compare/result.h"

namespace lockstep::testing {

inline constexpr double kFp32Floor = 0x1p-17;

// Builds the rows of one (step, rank) stream.
class Stream {
 public:
  explicit Stream(int step = 0) : step_(step) {}

  // A tensor row. `stats` are the baseline's (max, min, mean, norm); the
  // target's are the same scaled by 1 + error unless `target` is given.
  Stream& Tensor(const std::string& entry, const std::string& io, double error,
                 std::array<double, 4> stats,
                 std::optional<std::array<double, 4>> target = {}) {
    CompareRow r = Base(entry, io);
    r.is_tensor = true;
    r.error = error;
    r.floor = kFp32Floor;
    r.baseline_stats = stats;
    if (target) {
      r.target_stats = *target;
    } else {
      for (int k = 0; k < 4; ++k) r.target_stats[k] = stats[k] * (1 + error);
    }
    r.verdict = error > kFp32Floor ? Verdict::kError : Verdict::kPass;
    if (r.verdict != Verdict::kPass) r.reason = DivergenceReason::kPrecision;
    rows_.push_back(r);
    return *this;
  }

  // A number argument.
  Stream& Number(const std::string& entry, const std::string& io, double t,
                 double b) {
    CompareRow r = Base(entry, io);
    r.error = t == b ? 0 : std::fabs(t - b) / std::fabs(b);
    r.target_stats[0] = t;
    r.baseline_stats[0] = b;
    r.verdict = t == b ? Verdict::kPass : Verdict::kError;
    r.messages.push_back("value " + std::to_string(t) + " vs " +
                         std::to_string(b));
    rows_.push_back(r);
    return *this;
  }

  Stream& Unmatched(const std::string& entry, const std::string& io) {
    CompareRow r = Base(entry, io);
    r.verdict = Verdict::kUnmatched;
    rows_.push_back(r);
    return *this;
  }

  // Changes row i's error (its verdict follows; its statistics do not).
  Stream& SetError(size_t i, double error) {
    rows_[i].error = error;
    rows_[i].verdict = error > kFp32Floor ? Verdict::kError : Verdict::kPass;
    return *this;
  }

  std::vector<CompareRow>& rows() { return rows_; }

 private:
  CompareRow Base(const std::string& entry, const std::string& io) {
    CompareRow r;
    r.entry = entry;
    r.cells = PackedCells({entry + "." + io, entry + "." + io});
    r.step = step_;
    r.is_output = io.rfind("output", 0) == 0;
    r.is_input = !r.is_output;
    return r;
  }

  int step_;
  std::vector<CompareRow> rows_;
};

inline const std::array<double, 4> kX = {3, -2, 0.1, 40};
inline const std::array<double, 4> kY = {5, -1, 0.7, 60};
inline const std::array<double, 4> kW = {0.5, -0.5, 0.01, 4};
inline const std::array<double, 4> kZ = {9, -9, 1.5, 99};

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_COMPARE_DIVERGENCE_TESTING_H_
