#include "lockstep/report/replay_report.h"

#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

#include "lockstep/core/file.h"
#include "lockstep/core/markup.h"
#include "lockstep/numerics/replay_error.h"
#include "lockstep/report/csv.h"
#include "report/html_internal.h"
#include "report/json_util.h"

namespace lockstep {
namespace {

// What a replay found, decided once for summary.json, the page and the
// terminal: a suspect; nothing replayed, which earns no "no suspect" (the
// command exits 2); or every replayed result within its bound.
enum class ReplayOutcome { kSuspect, kNothingReplayed, kNoSuspect };

ReplayOutcome OutcomeOf(const ReplayResult& r) {
  if (r.first_suspect) return ReplayOutcome::kSuspect;
  return r.replayed == 0 ? ReplayOutcome::kNothingReplayed
                         : ReplayOutcome::kNoSuspect;
}

// Shortest text that reads back as the same double; "inf", "nan".
std::string Num(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[40];
  for (int p = 6; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

// For people: 4 significant digits.
std::string Short(double x) { return std::isnan(x) ? "-" : ReplayNumber(x); }

bool Measured(const ReplayCheck& c) {
  return c.verdict == ReplayVerdict::kOk ||
         c.verdict == ReplayVerdict::kSuspect;
}

std::string Where(const ReplayCheck& c) {
  std::string s;
  if (c.step >= 0) s += "step " + std::to_string(c.step) + ", ";
  s += "rank " + std::to_string(c.rank);
  return s;
}

}  // namespace

std::string ReplayCsv(const ReplayResult& r) {
  std::string out;
  AppendCsvLine({"Step", "Rank", "Entry", "Tensor", "Op", "Dtype", "Kind",
                 "Max ULP", "Max Rel", "CPU ULP", "Bound", "Verdict", "Reason",
                 "Bound Rule", "Worst Index", "Recorded", "Float64"},
                &out);
  for (const ReplayCheck& c : r.checks) {
    bool m = Measured(c);
    AppendCsvLine({c.step < 0 ? "" : std::to_string(c.step),
                   std::to_string(c.rank), c.entry, c.tensor, c.op, c.dtype,
                   c.kind, m ? Num(c.max_ulp) : "", m ? Num(c.max_rel) : "",
                   m ? Num(c.cpu_ulp) : "", m ? Num(c.bound) : "",
                   ReplayVerdictName(c.verdict), c.reason, c.bound_rule,
                   m && c.worst_index >= 0 ? std::to_string(c.worst_index) : "",
                   m ? Num(c.recorded) : "", m ? Num(c.reference) : ""},
                  &out);
  }
  return out;
}

std::string ReplaySummaryJson(const ReplayResult& r) {
  using internal::JsonNumberOrNull;
  using internal::JsonString;
  rapidjson::StringBuffer buf;
  internal::JsonWriter w(buf);
  w.StartObject();
  w.Key("tool");
  JsonString(&w, "lockstep replay");
  w.Key("dump");
  JsonString(&w, r.dump);
  w.Key("verdict");
  static constexpr const char* kVerdicts[] = {"suspect", "nothing replayed",
                                              "no suspect"};
  JsonString(&w, kVerdicts[static_cast<int>(OutcomeOf(r))]);
  w.Key("first_suspect");
  if (r.first_suspect) {
    const ReplayCheck& c = r.checks[*r.first_suspect];
    w.StartObject();
    w.Key("entry");
    JsonString(&w, c.entry);
    w.Key("tensor");
    JsonString(&w, c.tensor);
    w.Key("op");
    JsonString(&w, c.op);
    w.Key("step");
    w.Int64(c.step);
    w.Key("rank");
    w.Int64(c.rank);
    w.Key("dtype");
    JsonString(&w, c.dtype);
    w.Key("reason");
    JsonString(&w, c.reason);
    w.Key("max_ulp");
    JsonNumberOrNull(&w, c.max_ulp);
    w.Key("bound");
    JsonNumberOrNull(&w, c.bound);
    w.Key("bound_rule");
    JsonString(&w, c.bound_rule);
    w.Key("cpu_ulp");
    JsonNumberOrNull(&w, c.cpu_ulp);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("counts");
  w.StartObject();
  w.Key("entries");
  w.Uint64(r.entries);
  w.Key("replayed");
  w.Uint64(r.replayed);
  w.Key("checks");
  size_t checks = 0;
  for (const ReplayCheck& c : r.checks) checks += Measured(c);
  w.Uint64(checks);
  w.Key("suspect");
  w.Uint64(r.suspect);
  w.Key("not_replayable");
  w.Uint64(r.not_replayable);
  w.Key("skipped");
  w.Uint64(r.skipped);
  w.EndObject();
  w.Key("not_replayable");
  w.StartArray();
  for (const ReplayCheck& c : r.checks) {
    if (c.verdict != ReplayVerdict::kNotReplayable) continue;
    w.StartObject();
    w.Key("entry");
    JsonString(&w, c.entry);
    w.Key("op");
    JsonString(&w, c.op);
    w.Key("reason");
    JsonString(&w, c.reason);
    w.EndObject();
  }
  w.EndArray();
  w.Key("warnings");
  w.StartArray();
  for (const std::string& s : r.warnings) JsonString(&w, s);
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

namespace {

// The verdict line and its class: suspect (fail), nothing replayed (no
// verdict, a warning: not a pass), or every result within its bound.
std::pair<std::string, const char*> ReplayVerdictLine(const ReplayResult& r) {
  switch (OutcomeOf(r)) {
    case ReplayOutcome::kSuspect: {
      const ReplayCheck& c = r.checks[*r.first_suspect];
      return {"FAIL: first suspect " + c.entry + " " + c.tensor + " (" + c.op +
                  ", " + c.dtype + "); " + std::to_string(r.suspect) +
                  " suspect tensor(s) in all",
              "o-fail"};
    }
    case ReplayOutcome::kNothingReplayed:
      return {"No verdict: no call was replayed (nothing here is checked)",
              "o-warning"};
    case ReplayOutcome::kNoSuspect:
      break;
  }
  return {"PASS: no suspect: every replayed result is within its bound",
          "o-pass"};
}

}  // namespace

std::string ReplayHtml(const ReplayResult& r) {
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width\">"
      "<title>lockstep replay</title><style>";
  h += internal::kReportCss;
  h += internal::kReplayCss;
  h += "</style></head><body>\n<header class=\"top\"><div class=\"brand\">"
       "lockstep <span>replay report</span></div><dl class=\"runs\"><div>"
       "<dt>dump</dt><dd>" +
       EscapeMarkup(r.dump) + "</dd></div></dl></header>\n<main>\n";
  auto [line, outcome] = ReplayVerdictLine(r);
  h += std::string("<p id=\"verdict\" class=\"verdict ") + outcome + "\">" +
       EscapeMarkup(line) + "</p>\n";
  if (r.first_suspect) {
    const ReplayCheck& c = r.checks[*r.first_suspect];
    h += "<section id=\"first-suspect\" class=\"card fd found\"><h2>First "
         "suspect</h2><p class=\"fd-entry\"><code>" +
         EscapeMarkup(c.entry) + "</code> " + EscapeMarkup(c.tensor) + " (" +
         EscapeMarkup(c.op) + ", " + EscapeMarkup(c.dtype) + ", " +
         EscapeMarkup(Where(c)) + ")</p><p class=\"fd-detail\">" +
         EscapeMarkup(c.reason) +
         "</p><p class=\"fd-detail\">Bound: " + EscapeMarkup(c.bound_rule) +
         "</p><p class=\"fd-detail\">LibTorch CPU's own error in this dtype: " +
         EscapeMarkup(Short(c.cpu_ulp)) + " ulp</p></section>\n";
  }
  size_t checks = 0;
  for (const ReplayCheck& c : r.checks) checks += Measured(c);
  h += "<section id=\"counts\" class=\"card\"><h2>Entries</h2><p>" +
       std::to_string(r.entries) + " entries: " + std::to_string(r.replayed) +
       " replayed (" + std::to_string(checks) + " tensors checked, " +
       std::to_string(r.suspect) + " suspect), " +
       std::to_string(r.not_replayable) + " not replayable, " +
       std::to_string(r.skipped) +
       " skipped (modules, parameter gradients).</p></section>\n";
  auto table = [&](const std::string& title, const std::string& id, auto want) {
    std::string rows;
    for (const ReplayCheck& c : r.checks) {
      if (!want(c)) continue;
      bool m = Measured(c);
      const char* cls = c.verdict == ReplayVerdict::kSuspect
                            ? " class=\"v-error\""
                        : c.verdict == ReplayVerdict::kNotReplayable
                            ? " class=\"v-unmatched\""
                            : "";
      rows += std::string("<tr") + cls + "><td>" + EscapeMarkup(Where(c)) +
              "</td><td><code>" + EscapeMarkup(c.entry) + "</code></td><td>" +
              EscapeMarkup(c.tensor) + "</td><td>" + EscapeMarkup(c.op) +
              "</td><td>" + EscapeMarkup(c.dtype) + "</td><td>" +
              EscapeMarkup(c.kind) + "</td><td class=\"n\">" +
              (m ? Short(c.max_ulp) : "") + "</td><td class=\"n\">" +
              (m ? Short(c.cpu_ulp) : "") + "</td><td class=\"n\">" +
              (m ? Short(c.bound) : "") + "</td><td>" +
              ReplayVerdictName(c.verdict) + "</td><td>" +
              EscapeMarkup(c.reason.empty() ? c.bound_rule : c.reason) +
              "</td></tr>\n";
    }
    if (rows.empty()) return;
    h += "<section id=\"" + id + "\" class=\"card\"><h2>" + title +
         "</h2><div class=\"rt-wrap\"><table class=\"rt\"><thead><tr><th>"
         "Where</th><th>Entry</th><th>Tensor</th><th>Op</th><th>Dtype</th>"
         "<th>Kind</th><th>Max ulp</th><th>CPU ulp</th><th>Bound</th><th>"
         "Verdict</th><th>Reason / bound</th></tr></thead><tbody>\n" +
         rows + "</tbody></table></div></section>\n";
  };
  table("Suspects", "suspects", [](const ReplayCheck& c) {
    return c.verdict == ReplayVerdict::kSuspect;
  });
  table("Not replayable", "not-replayable", [](const ReplayCheck& c) {
    return c.verdict == ReplayVerdict::kNotReplayable;
  });
  table("Every check", "checks",
        [](const ReplayCheck& c) { return Measured(c); });
  h += "</main></body></html>\n";
  return h;
}

std::string ReplayTerminalSummary(const ReplayResult& r) {
  size_t checks = 0;
  for (const ReplayCheck& c : r.checks) checks += Measured(c);
  std::string s = std::to_string(r.entries) +
                  " entries: " + std::to_string(r.replayed) + " replayed (" +
                  std::to_string(checks) + " tensors checked), " +
                  std::to_string(r.not_replayable) + " not replayable, " +
                  std::to_string(r.skipped) + " skipped\n";
  switch (OutcomeOf(r)) {
    case ReplayOutcome::kSuspect: {
      const ReplayCheck& c = r.checks[*r.first_suspect];
      s += "first suspect: " + c.entry + " " + c.tensor + " (" + c.op + ", " +
           c.dtype + ", " + Where(c) + ")\n  " + c.reason +
           "\n  bound: " + c.bound_rule + "\n";
      s += std::to_string(r.suspect) + " suspect tensor(s) in all\n";
      break;
    }
    case ReplayOutcome::kNothingReplayed:
      s += "no verdict: no call was replayed\n";
      break;
    case ReplayOutcome::kNoSuspect:
      s += "no suspect: every replayed result is within its bound\n";
      break;
  }
  return s;
}

Status WriteReplayReports(const ReplayResult& r, const std::string& dir) {
  if (Status s = CreateDirs(dir); !s.ok()) return s;
  if (Status s = WriteFileAtomic(dir + "/replay.csv", ReplayCsv(r)); !s.ok()) {
    return s;
  }
  if (Status s = WriteFileAtomic(dir + "/summary.json", ReplaySummaryJson(r));
      !s.ok()) {
    return s;
  }
  return WriteFileAtomic(dir + "/report.html", ReplayHtml(r));
}

}  // namespace lockstep
