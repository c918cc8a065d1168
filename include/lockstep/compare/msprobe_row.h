// One row of msprobe's compare table before it is printed: the matched pair
// of OpRows and the values msprobe computes for it, typed as msprobe's
// DataFrame holds them (a Python float or a string), because msprobe's
// Result rules (result_rules.h) treat the two differently.
// Thread safety: plain values.
#ifndef LOCKSTEP_COMPARE_MSPROBE_ROW_H_
#define LOCKSTEP_COMPARE_MSPROBE_ROW_H_

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "lockstep/compare/op_rows.h"

namespace lockstep {

// msprobe's str2float: "12.5%" -> 0.125; unparsable -> 0.
double Str2Float(std::string s);

// A DataFrame cell: a float or a string. A string that msprobe makes from a
// number (str(x), or str(x) + "%" for a relative error) keeps the number
// and is printed only when written (`text`), which saves making hundreds of
// thousands of short strings on a large statistics compare.
struct Cell {
  enum class Text : unsigned char {
    kStr,   // the string `str`
    kRepr,  // the string str(num)
    kPct,   // the string str(num) + "%"
  };
  bool is_num = false;
  double num = 0;
  std::string str;
  Text text = Text::kStr;

  static Cell Num(double d) { return Cell{true, d, {}, Text::kStr}; }
  static Cell Str(std::string s) {
    return Cell{false, 0, std::move(s), Text::kStr};
  }
  static Cell Repr(double d) { return Cell{false, d, {}, Text::kRepr}; }
  static Cell Pct(double d) { return Cell{false, d, {}, Text::kPct}; }
  // A percentage string ("12.5%") as msprobe's str2float reads it (0.125);
  // false for other cells.
  bool PercentValue(double* fraction) const;
  // As pandas' to_csv prints it: repr for floats (±inf as " inf"/" -inf");
  // a string cell as its text.
  std::string ToCsv() const;
  void AppendCsv(std::string* out) const;  // ToCsv() appended to *out
};

// msprobe's constant strings.
inline constexpr const char* kNA = "N/A";
inline constexpr const char* kNanStr = "Nan";
inline constexpr const char* kUnsupported = "unsupported";
inline constexpr const char* kShapeUnmatched = "shape unmatched";

enum class MsprobeResult { kPass = 0, kWarning = 1, kError = 2 };
const char* MsprobeResultName(MsprobeResult r);  // "pass", "warning", "error"

struct MsprobeRow {
  const OpRow* npu = nullptr;
  const OpRow* bench = nullptr;  // nullptr when unmatched
  // Tensor mode: Cosine, EucDist, MaxAbsErr, MaxRelativeErr,
  // One Thousandth Err Ratio, Five Thousandths Err Ratio.
  // MD5 mode: metrics[0] is NPU MD5, metrics[1] BENCH MD5.
  std::array<Cell, 6> metrics;
  // Statistics mode: Max/Min/Mean/L2norm diff, then the four relative errors.
  std::array<Cell, 8> stat_diffs;
  // The message msprobe's tensor checks produced (kept by lockstep; HEAD
  // discards it when it re-initialises Err_message).
  std::string metric_message;
  MsprobeResult result = MsprobeResult::kPass;
  std::vector<std::string> err_messages;  // msprobe HEAD's Err_message list
};

// True for `npu` rows whose name marks an output ("….output.…").
bool IsOutputRow(const OpRow& row);

// Python's `a == b` for two JSON values (1 == 1.0, NaN != NaN).
bool PyEquals(const PyValue& a, const PyValue& b);

// A stat value as msprobe's DataFrame holds it (NaN floats become "Nan",
// None becomes "None").
Cell StatCell(const PyValue& v);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_MSPROBE_ROW_H_
