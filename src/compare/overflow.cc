#include "lockstep/compare/overflow.h"

#include <cmath>

namespace lockstep {
namespace {

OverflowKind ValueKind(const PyValue& v, double limit) {
  double d;
  if (v.kind() == PyValue::Kind::kFloat || v.kind() == PyValue::Kind::kInt) {
    d = v.as_double();
  } else if (v.kind() == PyValue::Kind::kStr) {
    const std::string& s = v.as_str();
    if (s == "nan" || s == "NaN" || s == "Nan") return OverflowKind::kNan;
    if (s == "inf" || s == "-inf" || s == "Infinity" || s == "-Infinity")
      return OverflowKind::kInf;
    return OverflowKind::kNone;
  } else {
    return OverflowKind::kNone;
  }
  if (std::isnan(d)) return OverflowKind::kNan;
  if (std::isinf(d)) return OverflowKind::kInf;
  if (limit > 0 && std::fabs(d) == limit) return OverflowKind::kSaturated;
  return OverflowKind::kNone;
}

double SaturationLimit(const std::string& dtype) {
  if (dtype.find("bfloat16") != std::string::npos || dtype == "BFloat16")
    return kBFloat16Max;
  if (dtype.find("float16") != std::string::npos || dtype == "Float16")
    return kHalfMax;
  if (dtype.find("float32") != std::string::npos || dtype == "Float32")
    return kHalfMax;
  return 0;
}

OverflowKind Worse(OverflowKind a, OverflowKind b) {
  auto rank = [](OverflowKind k) {
    switch (k) {
      case OverflowKind::kNan:
        return 3;
      case OverflowKind::kInf:
        return 2;
      case OverflowKind::kSaturated:
        return 1;
      default:
        return 0;
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace

const char* OverflowKindName(OverflowKind k) {
  switch (k) {
    case OverflowKind::kNone:
      return "none";
    case OverflowKind::kNan:
      return "nan";
    case OverflowKind::kInf:
      return "inf";
    case OverflowKind::kSaturated:
      return "saturated";
  }
  return "?";
}

OverflowKind RowOverflow(const OpRow& row) {
  if (!row.is_tensor) return OverflowKind::kNone;
  double limit = SaturationLimit(row.dtype);
  return Worse(ValueKind(row.stats[0], limit), ValueKind(row.stats[1], limit));
}

OverflowReport AnalyzeOverflow(const DumpFile& dump) {
  OverflowReport report;
  report.rows = FlattenDump(dump);
  size_t i = 0;
  while (i < report.rows.size()) {
    OverflowEntry e;
    e.entry = report.rows[i].entry;
    e.entry_index = report.rows[i].entry_index;
    bool inputs_bad = false, outputs_bad = false, argument_inf = false;
    size_t j = i;
    for (; j < report.rows.size() && report.rows[j].entry == e.entry; ++j) {
      const OpRow& r = report.rows[j];
      bool is_out = r.state == RowState::kOutput;
      if (!is_out) e.inputs.push_back(j);
      // An infinite number argument (masked_fill's -inf of a causal mask).
      argument_inf =
          argument_inf || (!is_out && !r.is_tensor &&
                           ValueKind(r.stats[0], 0) == OverflowKind::kInf);
      OverflowKind k = RowOverflow(r);
      if (k == OverflowKind::kNone) continue;
      e.kind = Worse(e.kind, k);
      e.bad_rows.push_back(j);
      (is_out ? outputs_bad : inputs_bad) = true;
    }
    // No overflow: infinities that an argument put there on purpose (a
    // NaN still is one), and a call whose outputs are clean (softmax of
    // masked logits: the infinities of its input end there).
    if (argument_inf && e.kind == OverflowKind::kInf) e.bad_rows.clear();
    if (!outputs_bad) e.bad_rows.clear();
    if (!e.bad_rows.empty()) {
      e.origin = outputs_bad && !inputs_bad;
      if (e.origin && report.first_origin < 0) {
        report.first_origin = static_cast<int>(report.entries.size());
      }
      report.entries.push_back(std::move(e));
    }
    i = j;
  }
  return report;
}

}  // namespace lockstep
