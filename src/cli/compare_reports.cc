// lockstep compare, once its checks have passed (compare_cmd.cc): compares
// the two runs, prints the gaps, the first divergence or the largest errors,
// and writes the reports (the CSV and the HTML table file on threads of
// their own, summary.json last).
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "cli/compare_cmd_internal.h"
#include "lockstep/compare/checkpoint_compare.h"
#include "lockstep/compare/compare_dumps.h"
#include "lockstep/compare/compare_share.h"
#include "lockstep/compare/run_env.h"
#include "lockstep/core/file.h"
#include "lockstep/core/log.h"
#include "lockstep/core/progress.h"
#include "lockstep/report/csv_report.h"
#include "lockstep/report/html_report.h"
#include "lockstep/report/outcome.h"
#include "lockstep/report/summary_json.h"
#include "lockstep/report/xlsx_report.h"

namespace lockstep::cli {
namespace compare_cmd {  // named: the CLI builds as a unity build
namespace {

// "a", "a and b", "a, b and c".
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

// The reports of one compare. The CSV and the HTML table file read only the
// rows and columns, so each starts on a thread of its own as soon as the
// rows are made, while FinishResult finds the first divergence; summary.json
// and the page wait for it. The threads are joined before anything returns.
class Reports {
 public:
  Reports(const CompareResult& r, const Args& a, const std::string& curves_svg)
      : r_(r),
        a_(a),
        ts_(CompareTimestamp()),
        html_(a.out_dir + "/report.html") {
    extras_.curves_svg = curves_svg;
    extras_.curves_title = a.curve_metric + " curves (" + a.baseline_log +
                           " = reference, " + a.target_log + ")";
    std::vector<std::string> earlier;
    for (const std::string& f :
         {std::string("summary.json"), std::string("report.html"),
          std::filesystem::path(HtmlTableFilePath(html_))
              .filename()
              .string()}) {
      if (PathExists(a.out_dir + "/" + f)) earlier.push_back(f);
    }
    replaced_ = JoinNames(earlier);
    csv_ = std::thread([this] {
      csvs_ = WriteCompareCsv(r_, a_.out_dir, ts_);
      TimingMark("compare: write the CSV (thread)");
    });
    table_thread_ = std::thread([this] {
      table_ = RenderHtmlTableFile(r_, extras_);
      TimingMark("compare: render the HTML table file (thread)");
    });
  }
  Reports(const Reports&) = delete;
  Reports& operator=(const Reports&) = delete;
  ~Reports() { Join(); }

  // Writes report.html (and the xlsx when asked) once FinishResult has run,
  // waits for the CSV, and writes summary.json last: a run killed before
  // it leaves the earlier run's summary.json, which names no file this run
  // did not finish (the temporaries it left go at the next run's start).
  Status Finish() {
    if (!replaced_.empty()) {
      LogWarning(a_.out_dir + ": replacing the " + replaced_ +
                 " of an earlier run (its compare_result CSVs stay)");
    }
    table_thread_.join();
    StatusOr<std::vector<std::string>> pages =
        WriteHtmlReport(r_, html_, extras_, std::move(table_));
    TimingMark("compare: write report.html");
    csv_.join();
    LOCKSTEP_RETURN_IF_ERROR(csvs_.status());
    for (const auto& p : *csvs_) LogInfo("wrote " + p);
    LOCKSTEP_RETURN_IF_ERROR(pages.status());
    std::string x = a_.out_dir + "/compare_result_" + ts_ + ".xlsx";
    if (a_.xlsx) LOCKSTEP_RETURN_IF_ERROR(WriteXlsxReport(r_, x));
    LOCKSTEP_RETURN_IF_ERROR(
        WriteSummaryJson(r_, a_.out_dir + "/summary.json"));
    TimingMark("compare: write summary.json");
    std::vector<std::string> written = {a_.out_dir + "/summary.json"};
    written.insert(written.end(), pages->begin(), pages->end());
    LogInfo("wrote " + JoinNames(written));
    if (a_.xlsx) LogInfo("wrote " + x);
    return Status::Ok();
  }

 private:
  void Join() {
    if (csv_.joinable()) csv_.join();
    if (table_thread_.joinable()) table_thread_.join();
  }

  const CompareResult& r_;
  const Args& a_;
  std::string ts_, html_, replaced_;
  HtmlExtras extras_;
  StatusOr<std::vector<std::string>> csvs_ = Status::Internal("not written");
  HtmlTableFile table_;
  std::thread csv_, table_thread_;
};

// The aligned streams' inserted/missing entries, the first few of them.
void PrintGaps(const CompareResult& r) {
  if (r.gaps.empty()) return;
  LogWarning("alignment: " + std::to_string(r.gaps.size()) +
             " entries on one side only");
  for (size_t i = 0; i < r.gaps.size() && i < 10; ++i) {
    const AlignmentGap& g = r.gaps[i];
    LogWarning(
        std::string("  ") +
        (g.in_target ? "inserted in target: " : "missing from target: ") +
        g.entry + " (" +
        (g.step >= 0 ? "step " + std::to_string(g.step) + ", " : "") + "rank " +
        std::to_string(g.rank) + ")");
  }
  if (r.gaps.size() > 10) LogWarning("  ... the rest are in summary.json");
}

void PrintFirstDivergence(const CompareResult& r) {
  const FirstDivergence& f = r.first_divergence;
  if (!f.found) return;
  std::string where = "rank " + std::to_string(f.rank);
  if (f.step >= 0) where = "step " + std::to_string(f.step) + ", " + where;
  LogWarning("FIRST DIVERGENCE: " + f.entry + " (" + where +
             ") reason=" + DivergenceReasonName(f.reason) + ": " + f.row +
             (f.detail.empty() ? "" : " — " + f.detail));
}

// Checkpoints: the rows with the largest errors, in place of a first
// divergence.
void PrintLargestErrors(const CompareResult& r) {
  for (size_t i : r.largest_errors) {
    const CompareRow& row = r.rows[i];
    std::string line = "LARGEST ERROR: " + std::string(row.npu_name()) + " " +
                       VerdictName(row.verdict);
    if (!row.messages.empty()) line += ": " + row.messages[0];
    if (row.verdict == Verdict::kPass) {
      LogInfo(line);
    } else {
      LogWarning(line);
    }
  }
  for (size_t i = 0; i < r.gaps.size() && i < 10; ++i)
    LogWarning("in the baseline only: " + r.gaps[i].entry);
  if (r.gaps.size() > 10) LogWarning("  ... the rest are in summary.json");
}

}  // namespace

int Compare(const Args& a, Prepared& p, ShareGroup* group) {
  StatusOr<CompareResult> r = CompareResult();
  if (group != nullptr && !p.checkpoints) {
    r = CompareDumpRowsShared(a.target, a.baseline, p.options, group);
  } else if (group != nullptr && group->index() != 0) {
    // Checkpoints are not shared: process 0 compares them alone.
  } else {
    r = p.checkpoints ? CompareCheckpointRows(a.target, a.baseline, p.options)
                      : CompareDumpRows(a.target, a.baseline, p.options);
  }
  if (!r.ok()) return ReportError(r.status());
  if (group != nullptr && group->index() != 0) return kExitPass;
  Status s;
  {
    Reports reports(*r, a, p.curves_svg);  // the CSV and table file start now
    FinishResult(&*r);
    TimingMark("compare: first divergence");
    if (!p.checkpoints) {
      for (auto& w : RunEnvWarnings(a.target, a.baseline))
        r->warnings.push_back(w);
    }
    for (const auto& w : r->warnings) LogWarning(w);
    if (p.checkpoints) {
      PrintLargestErrors(*r);
    } else {
      PrintGaps(*r);
      PrintFirstDivergence(*r);
      if (r->origin.found) LogWarning(OriginLine(r->origin));
    }
    s = reports.Finish();
  }
  if (!s.ok()) return ReportError(s);
  std::printf("%s\n", EscapeControl(VerdictLine(*r)).c_str());
  return OverallOutcome(*r) == Outcome::kPass ? kExitPass : kExitDiverged;
}

}  // namespace compare_cmd
}  // namespace lockstep::cli
