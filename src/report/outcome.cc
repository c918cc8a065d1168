#include "lockstep/report/outcome.h"

#include <string>
#include <vector>

#include "lockstep/compare/rank_origin.h"

namespace lockstep {
namespace {

// "64 error, 62 warning, 2535 pass of 2822 rows": zero counts are left out.
std::string CountsPhrase(const CompareSummary& s) {
  std::string out;
  auto add = [&out](int64_t n, const char* what) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + what;
  };
  add(s.error, "error");
  add(s.warning, "warning");
  add(s.unmatched, "unmatched");
  add(s.pass, "pass");
  return out + " of " + std::to_string(s.rows) + " rows";
}

// "Functional.conv2d.1.forward (rank 0, step 3)"
std::string EntryAt(const FirstDivergence& fd) {
  std::string out = fd.entry + " (rank " + std::to_string(fd.rank);
  if (fd.step >= 0) out += ", step " + std::to_string(fd.step);
  return out + ")";
}

std::string Where(const FirstDivergence& fd) {
  return EntryAt(fd) + ": " + DivergenceReasonName(fd.reason);
}

bool IsCheckpoints(const CompareResult& r) {
  return r.subject == CompareSubject::kCheckpoints;
}

// Checkpoints: "the target lacks 2 names of the baseline (a, b); " ("" when
// it lacks none).
std::string LackedNamesPhrase(const CompareResult& r) {
  if (!IsCheckpoints(r) || r.gaps.empty()) return "";
  std::string out = "the target lacks " + std::to_string(r.gaps.size()) +
                    (r.gaps.size() == 1 ? " name" : " names") +
                    " of the baseline (";
  for (size_t i = 0; i < r.gaps.size() && i < 4; ++i)
    out += (i ? ", " : "") + r.gaps[i].entry;
  return out + (r.gaps.size() > 4 ? ", ...); " : "); ");
}

// Checkpoints: "largest error at fc.weight: cosine 0.98, max abs err 0.05; "
// ("" when no row differs).
std::string LargestErrorPhrase(const CompareResult& r) {
  if (r.largest_errors.empty()) return "";
  const CompareRow& row = r.rows[r.largest_errors[0]];
  std::string out = "largest error at " + std::string(row.npu_name());
  if (!row.messages.empty()) out += ": " + row.messages[0];
  return out + "; ";
}

std::string CheckpointVerdictLine(const CompareResult& r, Outcome o) {
  const CompareSummary& s = r.summary;
  switch (o) {
    case Outcome::kPass:
      return "PASS: " + std::to_string(s.rows) + " rows, all pass";
    case Outcome::kWarning:
      return "WARNING: " + LargestErrorPhrase(r) + CountsPhrase(s);
    case Outcome::kFail:
      break;
  }
  return "FAIL: " + LackedNamesPhrase(r) + LargestErrorPhrase(r) +
         CountsPhrase(s);
}

}  // namespace

Outcome OverallOutcome(const CompareResult& result) {
  const CompareSummary& s = result.summary;
  // A name the target lacks fails a checkpoint compare (in a dump compare,
  // a missing entry is the first divergence).
  if (IsCheckpoints(result) && !result.gaps.empty()) return Outcome::kFail;
  if (result.first_divergence.found || s.error > 0 ||
      !result.missing_steps.empty() || !result.missing_ranks.empty()) {
    return Outcome::kFail;
  }
  if (s.warning > 0 || s.unmatched > 0) return Outcome::kWarning;
  return Outcome::kPass;
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kWarning:
      return "warning";
    case Outcome::kFail:
      return "fail";
  }
  return "?";
}

// "no comparison for step 0 rank 1 (not in the target), ...; " ("" when
// none); the reasons cut at their first colon (the warnings have them all).
std::string MissingRanksPhrase(const CompareResult& result) {
  const auto& m = result.missing_ranks;
  if (m.empty()) return "";
  std::string out = "no comparison for ";
  for (size_t i = 0; i < m.size(); ++i) {
    if (i == 4) {
      out += " and " + std::to_string(m.size() - i) + " more ranks";
      break;
    }
    out += std::string(i ? ", " : "") + "step " + std::to_string(m[i].step) +
           " rank " + std::to_string(m[i].rank) + " (" +
           m[i].why.substr(0, m[i].why.find(':')) + ")";
  }
  return out + "; ";
}

// Steps and ranks the comparison lacks: "the target lacks steps 3, 4 of
// the baseline; " ("" when none).
std::string MissingPhrase(const CompareResult& result) {
  std::string out = MissingRanksPhrase(result);
  const auto& m = result.missing_steps;
  if (m.empty()) return out;
  out += m.size() == 1 ? "the target lacks step " : "the target lacks steps ";
  for (size_t i = 0; i < m.size(); ++i) {
    if (i == 8) {
      out += " and " + std::to_string(m.size() - i) + " more";
      break;
    }
    out += (i ? ", " : "") + std::to_string(m[i]);
  }
  return out + " of the baseline; ";
}

std::string VerdictLine(const CompareResult& result) {
  const CompareSummary& s = result.summary;
  if (IsCheckpoints(result))
    return CheckpointVerdictLine(result, OverallOutcome(result));
  if (!result.missing_steps.empty() || !result.missing_ranks.empty()) {
    std::string line = "FAIL: " + MissingPhrase(result);
    if (result.first_divergence.found) {
      line +=
          std::string(result.first_divergence.drift ? "drift from "
                                                    : "first divergence at ") +
          Where(result.first_divergence) + "; ";
    }
    return line + CountsPhrase(s);
  }
  switch (OverallOutcome(result)) {
    case Outcome::kPass:
      return "PASS: " + std::to_string(s.rows) + " rows, all pass";
    case Outcome::kWarning:
      return "WARNING: no divergence; " + CountsPhrase(s);
    case Outcome::kFail:
      break;
  }
  if (!result.first_divergence.found) {
    return "FAIL: no first divergence found; " + CountsPhrase(s);
  }
  if (result.first_divergence.drift) {
    return "FAIL: the runs drift apart, from " +
           EntryAt(result.first_divergence) +
           " on, and no single operator's error exceeds what its inputs "
           "explain; " +
           CountsPhrase(s);
  }
  return "FAIL: first divergence at " + Where(result.first_divergence) + "; " +
         CountsPhrase(s);
}

std::string OriginLine(const RankOrigin& o) {
  if (!o.found) return "";
  std::string out = "origin: rank " + std::to_string(o.rank);
  if (o.step >= 0) out += ", step " + std::to_string(o.step);
  out += ", " + o.entry + " (" + DivergenceReasonName(o.reason) + ")";
  // The hops grouped by their collective, in order of first use.
  std::vector<std::string> entries;
  std::vector<std::vector<int>> to, from;
  for (const OriginHop& h : o.path) {
    size_t k = 0;
    while (k < entries.size() && entries[k] != h.entry) ++k;
    if (k == entries.size()) {
      entries.push_back(h.entry);
      to.emplace_back();
      from.emplace_back();
    }
    to[k].push_back(h.rank);
    from[k].push_back(h.from);
  }
  out += entries.empty() ? "; reached no other rank" : "; reached ";
  constexpr size_t kMaxGroups = 4;  // the rest counted
  size_t more = 0;
  for (size_t k = kMaxGroups; k < entries.size(); ++k) more += to[k].size();
  for (size_t k = 0; k < entries.size() && k < kMaxGroups; ++k) {
    std::string f = RankRanges(from[k]);
    out += std::string(k ? "; " : "") +
           (to[k].size() == 1 ? "rank " : "ranks ") + RankRanges(to[k]) +
           " through " + entries[k] +
           (f.find_first_of(".,") == std::string::npos ? " from rank "
                                                       : " from ranks ") +
           f;
  }
  if (more > 0) {
    size_t n = entries.size() - kMaxGroups;
    out += "; " + std::to_string(more) + " more through " + std::to_string(n) +
           (n == 1 ? " other collective" : " other collectives");
  }
  if (!o.others.empty()) {
    std::vector<int> others;
    for (const OriginHop& h : o.others) others.push_back(h.rank);
    out += "; " + std::to_string(others.size()) +
           (others.size() == 1 ? " other rank" : " other ranks") +
           (others.size() == 1 ? " diverged on its own ("
                               : " diverged on their own (") +
           RankRanges(others) + ")";
  }
  return out;
}

}  // namespace lockstep
