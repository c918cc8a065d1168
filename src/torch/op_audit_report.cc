// The audit's stdout table and its JSON.
#include <cmath>
#include <cstdio>

#include "torch/op_audit_internal.h"

namespace lockstep {
namespace audit {

std::string Num(double x) {
  if (std::isnan(x)) return "nan";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

}  // namespace audit

namespace {

using audit::Num;

std::string Pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s + " ";
}

size_t ChecksPassed(const OpAudit& a) {
  size_t n = 0;
  for (const AuditCheck& c : a.checks) n += c.pass;
  return n;
}

std::string Row(const OpAudit& a) {
  std::string s = Pad(a.op, 10) + Pad(audit::DTypeShortName(a.dtype), 8);
  if (!a.skipped.empty()) return s + "skipped: " + a.skipped + "\n";
  char cr[16];
  std::snprintf(cr, sizeof cr, "%.3f%%",
                100.0 * static_cast<double>(a.correctly_rounded) /
                    static_cast<double>(std::max<size_t>(a.count, 1)));
  bool msprobe =
      (a.ulp_verdict.pass || !a.ulp_applicable) && a.bench_verdict.pass;
  char ulps[48];  // 4 significant digits keep the columns aligned
  std::snprintf(ulps, sizeof ulps, "%-9.4g %-9.4g ", a.max_ulp, a.mean_ulp);
  s += Pad(std::to_string(a.count), 7) + ulps + Pad(cr, 8) +
       Pad(std::to_string(a.nonfinite_mismatches), 6) +
       Pad(std::to_string(a.out_of_range), 6) +
       Pad(msprobe ? "pass" : "FAIL", 7) +
       Pad(std::to_string(ChecksPassed(a)) + "/" +
               std::to_string(a.checks.size()),
           6) +
       (a.Passed() ? "PASS" : "FAIL");
  for (const AuditSample& w : a.worst) {  // the worst with a finite error
    if (std::isinf(w.ulp)) continue;
    s += "  worst " + a.op + "(" + Num(w.input) + ") = " + Num(w.result) +
         ", ref " + Num(w.reference);
    break;
  }
  return s + "\n";
}

// Lines under the table for what failed.
std::string Failures(const OpAudit& a) {
  std::string s;
  if (!a.skipped.empty()) return s;
  std::string head = "  " + a.op + " " + audit::DTypeShortName(a.dtype) + ": ";
  if (!a.ulp_verdict.pass && a.ulp_applicable) {
    s += head + "msprobe " + a.ulp_verdict.message + "\n";
  }
  if (!a.ulp_applicable) {
    s += head +
         "msprobe's ULP standard fails correctly rounded results too; not "
         "used\n";
  }
  if (!a.bench_verdict.pass) {
    s += head + "msprobe " + a.bench_verdict.message + "\n";
  }
  for (const AuditCheck& c : a.checks) {
    if (!c.pass)
      s += head + "check '" + c.name + "' failed: " + c.detail + "\n";
  }
  return s;
}

std::string Quote(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

// A JSON number, or "inf"/"-inf"/"nan" as strings. `digits` 9 or 17.
std::string JNum(double x, int digits = 9) {
  if (std::isnan(x)) return "\"nan\"";
  if (std::isinf(x)) return x > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

std::string JsonMsprobe(const OpAudit& a) {
  return "{\"ulp\": {\"max_ulp\": " + JNum(a.ulp.max_ulp) +
         ", \"mean_ulp\": " + JNum(a.ulp.mean_ulp) +
         ", \"proportion\": " + JNum(a.ulp.proportion) +
         ", \"pass\": " + (a.ulp_verdict.pass ? "true" : "false") +
         ", \"applicable\": " + (a.ulp_applicable ? "true" : "false") +
         "}, \"absolute_threshold\": {\"inf_nan_error_ratio\": " +
         JNum(a.abs.inf_nan_error_ratio) +
         ", \"rel_err_ratio\": " + JNum(a.abs.rel_err_ratio) +
         ", \"abs_err_ratio\": " + JNum(a.abs.abs_err_ratio) +
         ", \"pass\": " + (a.abs_verdict.pass ? "true" : "false") +
         "}, \"benchmark\": {\"small_value_err_ratio\": " +
         JNum(a.bench.small_value_err_ratio) +
         ", \"rmse\": " + JNum(a.bench.rmse) + ", \"eb\": " + JNum(a.bench.eb) +
         ", \"max_rel_err\": " + JNum(a.bench.max_rel_err) +
         ", \"mean_rel_err\": " + JNum(a.bench.mean_rel_err) +
         ", \"pass\": " + (a.bench_verdict.pass ? "true" : "false") + "}}";
}

std::string JsonOp(const OpAudit& a) {
  std::string s =
      "{\"op\": " + Quote(a.op) +
      ", \"dtype\": " + Quote(audit::DTypeShortName(a.dtype)) +
      ", \"device\": " + Quote(a.device) +
      ", \"skipped\": " + Quote(a.skipped) +
      ", \"count\": " + std::to_string(a.count) +
      ", \"max_ulp\": " + JNum(a.max_ulp) +
      ", \"mean_ulp\": " + JNum(a.mean_ulp) +
      ", \"correctly_rounded\": " + std::to_string(a.correctly_rounded) +
      ", \"nonfinite_mismatches\": " + std::to_string(a.nonfinite_mismatches) +
      ", \"out_of_range\": " + std::to_string(a.out_of_range) +
      ", \"worst\": [";
  for (size_t i = 0; i < a.worst.size(); ++i) {
    const AuditSample& w = a.worst[i];
    s += std::string(i ? ", " : "") + "{\"input\": " + JNum(w.input) +
         ", \"result\": " + JNum(w.result) +
         ", \"reference\": " + JNum(w.reference) +
         ", \"exact\": " + JNum(w.exact, 17) + ", \"ulp\": " + JNum(w.ulp) +
         "}";
  }
  s += "], \"msprobe\": " + JsonMsprobe(a) + ", \"checks\": [";
  for (size_t i = 0; i < a.checks.size(); ++i) {
    const AuditCheck& c = a.checks[i];
    s += std::string(i ? ", " : "") + "{\"name\": " + Quote(c.name) +
         ", \"pass\": " + (c.pass ? "true" : "false") +
         ", \"detail\": " + Quote(c.detail) + "}";
  }
  return s + "], \"pass\": " + (a.Passed() ? "true" : "false") + "}";
}

}  // namespace

std::string FormatAuditTable(const std::vector<OpAudit>& audits) {
  std::string s = Pad("op", 10) + Pad("dtype", 8) + Pad("count", 7) +
                  Pad("max_ulp", 9) + Pad("mean_ulp", 9) + Pad("CR", 8) +
                  Pad("nonfin", 6) + Pad("range", 6) + Pad("msprobe", 7) +
                  Pad("checks", 6) + "verdict\n";
  std::string failures;
  for (const OpAudit& a : audits) {
    s += Row(a);
    failures += Failures(a);
  }
  return failures.empty() ? s : s + "\n" + failures;
}

std::string AuditToJson(const std::vector<OpAudit>& audits) {
  std::string s = "{\"audits\": [\n";
  bool pass = true;
  for (size_t i = 0; i < audits.size(); ++i) {
    s += "  " + JsonOp(audits[i]) + (i + 1 < audits.size() ? ",\n" : "\n");
    pass &= audits[i].Passed();
  }
  return s + "], \"pass\": " + (pass ? "true" : "false") + "}\n";
}

}  // namespace lockstep
