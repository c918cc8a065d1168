#include "lockstep/compare/msprobe_row.h"

#include <charconv>
#include <cstdlib>

#include "lockstep/numerics/pyfloat.h"

namespace lockstep {

std::string Cell::ToCsv() const {
  std::string out;
  AppendCsv(&out);
  return out;
}

void Cell::AppendCsv(std::string* out) const {
  char buf[kPyFloatReprMax];
  if (is_num) {
    if (std::isinf(num)) {
      out->append(num > 0 ? " inf" : " -inf");
    } else {
      out->append(buf, static_cast<size_t>(PyFloatReprTo(num, buf)));
    }
    return;
  }
  switch (text) {
    case Text::kStr:
      out->append(str);
      return;
    case Text::kRepr:
    case Text::kPct:
      out->append(buf, static_cast<size_t>(PyFloatReprTo(num, buf)));
      if (text == Text::kPct) out->push_back('%');
      return;
  }
}

bool Cell::PercentValue(double* fraction) const {
  if (is_num) return false;
  if (text == Text::kPct) {
    // str2float("<repr>%"): repr reads back as the same double.
    *fraction = num / 100;
    return true;
  }
  if (text != Text::kStr || str.empty() || str.back() != '%') return false;
  *fraction = Str2Float(str);
  return true;
}

// msprobe's str2float: "12.5%" -> 0.125; unparsable -> 0.
double Str2Float(std::string s) {
  while (!s.empty() && s.back() == '%') s.pop_back();
  while (!s.empty() && s.front() == '%') s.erase(s.begin());
  const char* b = s.c_str();
  double d = 0;
  // Our own cells are plain decimals: from_chars (correctly rounded, as
  // strtod) is much faster; strtod takes what it does not (spaces, hex).
  auto r = std::from_chars(b, b + s.size(), d);
  if (r.ec == std::errc() && r.ptr == b + s.size()) return d / 100;
  char* end = nullptr;
  d = std::strtod(b, &end);
  if (end == b) return 0;
  while (*end == ' ') ++end;
  return *end == '\0' ? d / 100 : 0;
}

const char* MsprobeResultName(MsprobeResult r) {
  switch (r) {
    case MsprobeResult::kPass:
      return "pass";
    case MsprobeResult::kWarning:
      return "warning";
    case MsprobeResult::kError:
      return "error";
  }
  return "?";
}

bool IsOutputRow(const OpRow& row) {
  return row.name.find(".output.") != std::string::npos;
}

bool PyEquals(const PyValue& a, const PyValue& b) {
  bool an = a.is_number() || a.kind() == PyValue::Kind::kBool;
  bool bn = b.is_number() || b.kind() == PyValue::Kind::kBool;
  if (an && bn) {
    if (a.kind() == PyValue::Kind::kInt && b.kind() == PyValue::Kind::kInt) {
      return a.as_int() == b.as_int() && a.PyStr() == b.PyStr();
    }
    return a.as_double() == b.as_double();
  }
  if (a.kind() != b.kind()) return false;
  if (a.kind() == PyValue::Kind::kList) {
    if (a.items().size() != b.items().size()) return false;
    for (size_t i = 0; i < a.items().size(); ++i) {
      if (!PyEquals(a.items()[i], b.items()[i])) return false;
    }
    return true;
  }
  return a == b;
}

Cell StatCell(const PyValue& v) {
  if (v.kind() == PyValue::Kind::kFloat) {
    if (std::isnan(v.as_double())) return Cell::Str(kNanStr);
    return Cell::Num(v.as_double());
  }
  return Cell::Str(v.PyStr());
}

}  // namespace lockstep
