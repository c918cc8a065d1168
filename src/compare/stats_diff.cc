#include "lockstep/compare/stats_diff.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "lockstep/numerics/pandas_parse.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace {

enum class Kind { kNan, kInf, kNegInf, kNum, kDevice, kNA, kOther };

std::string Lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// pandas.to_numeric on a string: a plain decimal/exponent number.
bool ParseNumber(const std::string& s, double* out) {
  if (s.empty()) return false;
  std::string l = Lower(s);
  if (l == "true" || l == "false") return false;
  std::optional<double> d = PandasParseFloat(s);
  if (!d) return false;
  *out = *d;
  return true;
}

bool IsIntOrFloat(const PyValue& v) {
  return v.kind() == PyValue::Kind::kFloat || v.kind() == PyValue::Kind::kInt;
}

// str() of an int or float, written to `buf` (kPyFloatReprMax bytes).
std::string_view NumStr(const PyValue& v, char* buf) {
  if (v.kind() == PyValue::Kind::kFloat)
    return std::string_view(
        buf, static_cast<size_t>(PyFloatReprTo(v.as_double(), buf)));
  auto r = std::to_chars(buf, buf + kPyFloatReprMax, v.as_int());
  return std::string_view(buf, static_cast<size_t>(r.ptr - buf));
}

// Classify for an int or float whose str() is `str`.
Kind ClassifyNum(const PyValue& v, std::string_view str, double* num) {
  double d = v.as_double();
  if (std::isnan(d)) return Kind::kNan;
  if (std::isinf(d)) return d > 0 ? Kind::kInf : Kind::kNegInf;
  // msprobe re-parses str(value) with pandas: reproduce its rounding.
  *num = PandasParseFloat(str).value_or(d);
  return Kind::kNum;
}

Kind Classify(const PyValue& v, double* num) {
  if (IsIntOrFloat(v)) {
    char buf[kPyFloatReprMax];
    return ClassifyNum(v, NumStr(v, buf), num);
  }
  std::string s = v.PyStr();
  std::string l = Lower(s);
  if (l == "nan") return Kind::kNan;
  if (l == "inf" || l == "+inf" || l == "infinity") return Kind::kInf;
  if (l == "-inf" || l == "-infinity") return Kind::kNegInf;
  if (s == kNA) return Kind::kNA;
  if (v.kind() == PyValue::Kind::kStr && ParseNumber(s, num)) return Kind::kNum;
  if (l.find("npu") != std::string::npos ||
      l.find("cpu") != std::string::npos ||
      l.find("cuda") != std::string::npos) {
    return Kind::kDevice;
  }
  return Kind::kOther;
}

std::pair<Cell, Cell> Both(const char* s) {
  return {Cell::Str(s), Cell::Str(s)};
}

// Python str() of the value as it sits in msprobe's DataFrame.
std::string DfStr(const PyValue& v) {
  if (v.kind() == PyValue::Kind::kFloat && std::isnan(v.as_double()))
    return kNanStr;
  return v.PyStr();
}

}  // namespace

std::pair<Cell, Cell> StatDiff(const PyValue& npu, const PyValue* bench) {
  if (bench == nullptr) return Both(kNA);
  double a = 0, b = 0;
  Kind ka, kb;
  if (IsIntOrFloat(npu) && IsIntOrFloat(*bench)) {
    // The common case, with each str() made once ("nan" == "nan" as "Nan"
    // == "Nan" in DfStr).
    char sa[kPyFloatReprMax], sb[kPyFloatReprMax];
    std::string_view ta = NumStr(npu, sa), tb = NumStr(*bench, sb);
    if (ta == tb) return Both("0");
    ka = ClassifyNum(npu, ta, &a);
    kb = ClassifyNum(*bench, tb, &b);
  } else {
    if (DfStr(npu) == DfStr(*bench)) return Both("0");
    ka = Classify(npu, &a);
    kb = Classify(*bench, &b);
  }
  if (ka == Kind::kNA || kb == Kind::kNA) return Both(kNA);
  if (ka == Kind::kNum && kb == Kind::kNum) {
    double diff = a - b;
    Cell rel = b == 0 ? Cell::Str("inf") : Cell::Pct(std::fabs(diff / b * 100));
    return {Cell::Repr(diff), rel};
  }
  bool special_a = ka == Kind::kNan || ka == Kind::kInf ||
                   ka == Kind::kNegInf || ka == Kind::kNum;
  bool special_b = kb == Kind::kNan || kb == Kind::kInf ||
                   kb == Kind::kNegInf || kb == Kind::kNum;
  if (special_a && special_b) {
    if (ka == Kind::kNan || kb == Kind::kNan) return Both(kNanStr);
    if (ka == Kind::kInf) return Both("inf");        // vs NUM or -INF
    if (ka == Kind::kNegInf) return Both("-inf");    // vs NUM or INF
    return Both(kb == Kind::kInf ? "-inf" : "inf");  // NUM vs ±INF
  }
  if (ka == Kind::kDevice && kb == Kind::kDevice) return Both(kNA);
  return Both("Diff");
}

void ComputeStatDiffs(MsprobeRow* row) {
  for (int i = 0; i < 4; ++i) {
    auto [diff, rel] = StatDiff(row->npu->stats[i],
                                row->bench ? &row->bench->stats[i] : nullptr);
    row->stat_diffs[i] = std::move(diff);
    row->stat_diffs[4 + i] = std::move(rel);
  }
}

}  // namespace lockstep
