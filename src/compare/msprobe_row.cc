#include "lockstep/compare/msprobe_row.h"

#include "lockstep/numerics/pyfloat.h"

namespace lockstep {

std::string Cell::ToCsv() const {
  if (!is_num) return str;
  if (std::isinf(num)) return num > 0 ? " inf" : " -inf";
  return PyFloatRepr(num);
}

void Cell::AppendCsv(std::string* out) const {
  if (!is_num) {
    out->append(str);
  } else if (std::isinf(num)) {
    out->append(num > 0 ? " inf" : " -inf");
  } else {
    char buf[kPyFloatReprMax];
    out->append(buf, static_cast<size_t>(PyFloatReprTo(num, buf)));
  }
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
