#include "curve/log_builder.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <utility>

#include "lockstep/curve/readers.h"

namespace lockstep {
namespace curve_internal {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

// "inf", "infinity", "nan" in any case; from_chars takes them, but not a
// leading '+', which Python and C printf never write but people do.
bool ParseSpecial(std::string_view s, double* out) {
  bool neg = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  double v;
  if (EqualsNoCase(s, "nan")) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (EqualsNoCase(s, "inf") || EqualsNoCase(s, "infinity")) {
    v = std::numeric_limits<double>::infinity();
  } else {
    return false;
  }
  *out = neg ? -v : v;
  return true;
}

}  // namespace

CurveSeries* Series(CurveLog* log, const std::string& name) {
  auto [it, inserted] = log->metrics.try_emplace(name);
  if (inserted) it->second.name = name;
  return &it->second;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' ||
                        s.front() == '\r' || s.front() == '\n')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

bool ParseDouble(std::string_view s, double* out) {
  s = Trim(s);
  if (s.empty()) return false;
  if (ParseSpecial(s, out)) return true;
  if (s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+' || s[0] == 'i' || s[0] == 'I' || s[0] == 'n' ||
      s[0] == 'N') {
    return false;
  }
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec == std::errc::result_out_of_range) {
    // Overflow: ±inf like Python's float(); underflow (a negative
    // exponent): ±0.
    std::string_view parsed(s.data(), end - s.data());
    size_t e = parsed.find_first_of("eE");
    bool tiny = e != std::string_view::npos && e + 1 < parsed.size() &&
                parsed[e + 1] == '-';
    double sign = s[0] == '-' ? -1 : 1;
    *out = tiny ? sign * 0.0 : sign * std::numeric_limits<double>::infinity();
    return end == s.data() + s.size();
  }
  return ec == std::errc() && end == s.data() + s.size();
}

bool ParseStep(std::string_view s, int64_t* out) {
  s = Trim(s);
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) {
    return true;
  }
  double d;
  if (!ParseDouble(s, &d) || !std::isfinite(d) || d != std::floor(d) ||
      std::fabs(d) >= 9.2e18) {
    return false;
  }
  *out = static_cast<int64_t>(d);
  return true;
}

int StepKeyRank(std::string_view key) {
  static constexpr std::string_view kKeys[] = {"step", "global_step",
                                               "iteration", "iter", "epoch"};
  for (int i = 0; i < 5; ++i) {
    if (EqualsNoCase(Trim(key), kKeys[i])) return i;
  }
  return -1;
}

std::string SnakeCase(std::string_view prose) {
  std::string out;
  bool gap = false;
  for (char c : prose) {
    char l = Lower(c);
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9')) {
      if (gap && !out.empty()) out += '_';
      out += l;
      gap = false;
    } else {
      gap = true;
    }
  }
  return out;
}

Status CheckNotEmpty(const CurveLog& log, std::string_view subject) {
  for (const auto& [name, series] : log.metrics) {
    if (!series.points.empty()) return Status::Ok();
  }
  std::string problem = StrCat(
      "no numeric series found (", std::to_string(log.lines),
      " lines/records read, ", std::to_string(log.malformed), " malformed)");
  if (!log.warnings.empty()) problem += StrCat("; ", log.warnings.front());
  return Status::Corruption(
      subject,
      StrCat(problem, ". Note: is this a ", CurveFormatName(log.format),
             " log? Name the format explicitly if not"));
}

}  // namespace curve_internal

std::string CanonicalMetricName(std::string_view raw) {
  using curve_internal::SnakeCase;
  std::string_view s = curve_internal::Trim(raw);
  if (s.substr(0, 6) == "train/") return CanonicalMetricName(s.substr(6));
  if (s.substr(0, 5) == "eval/") {
    return std::string("eval_") + CanonicalMetricName(s.substr(5));
  }
  static const std::pair<std::string_view, const char*> kAliases[] = {
      {"loss", kMetricLoss},
      {"lm_loss", kMetricLoss},
      {"eval_loss", kMetricEvalLoss},
      {"lm_loss_validation", kMetricEvalLoss},
      {"validation_loss", kMetricEvalLoss},
      {"val_loss", kMetricEvalLoss},
      {"lr", kMetricLearningRate},
      {"learning_rate", kMetricLearningRate},
      {"loss_scale", kMetricLossScale},
      {"grad_norm", kMetricGradNorm},
      {"number_of_skipped_iterations", kMetricSkipped},
      {"skipped_iterations", kMetricSkipped},
      {"number_of_nan_iterations", kMetricNan},
      {"nan_iterations", kMetricNan},
  };
  std::string snake = SnakeCase(s);
  for (const auto& [alias, canonical] : kAliases) {
    if (snake == alias) return canonical;
  }
  return std::string(s);
}

}  // namespace lockstep
