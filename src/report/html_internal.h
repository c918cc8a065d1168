// Pieces of the HTML report (html_report.h): the embedded data, the table
// encoding, the style sheet and the script. Kept apart so that each file
// holds one concept.
// Thread safety: pure functions and constants.
#ifndef LOCKSTEP_SRC_REPORT_HTML_INTERNAL_H_
#define LOCKSTEP_SRC_REPORT_HTML_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json_util.h"
#include "lockstep/compare/result.h"

namespace lockstep::internal {

// Escapes & < > " ' for HTML text and attribute values (and sanitizes UTF-8).
std::string HtmlEscape(std::string_view s);

// A table of rows, compactly (TABLE below), column by column:
//   {"n": rows held, "width": W (cell columns: the most of the header and
//    of any row's cells; a row's missing cells are ""),
//    "index": [row number] (absent: rows 0..n-1 of the result),
//    "dict": [str], "cells": [COLUMN] (W of them),
//    "derive": [[c, a, b, relative]] (statistics mode: cell column c's
//    derived cells are made from columns a and b; absent: none),
//    "verdict": COLUMN ("0" pass, "1" warning, "2" error, "3" unmatched),
//    "rank": COLUMN, "step": COLUMN (decimal), "notes": COLUMN ("\n"-joined
//    messages)}
// A COLUMN is a list of tokens, read top to bottom, each giving the next
// cell(s) of the column:
//   k >= 0   dict[k]
//   null     the cell to its left (cell columns 1.. only)
//   -k       k more cells, each made as the cell above was: the cell to
//            its left when that one was null, else equal to the cell above
//   "c..."   a literal: the first (c - 35) characters of the cell above
//            (ASCII only; "" above the first row) followed by the rest
//   true     a derived cell (a column of "derive"): "0" when the texts of
//            a and b are equal, else x - y as Python's repr, or with
//            `relative` |x - y| / |y| * 100 as its repr + "%" ("inf" when
//            y is 0), x and y the numbers a and b hold (correctly
//            rounded). No cell takes a prefix from a derived cell above
//            it, and the cells of and right of a derived column are never
//            null.
//   [k, "x y"]  dict[k] with its U+0001 blanks filled, in order, by the
//            space-separated numbers (notes only)
// Strings are sanitized UTF-8 (bytes that are not become U+FFFD).
// `rows`: indices into r.rows, ascending; nullptr: every row.
void WriteTable(const CompareResult& r, const std::vector<size_t>* rows,
                JsonWriter* w);

// Where the page finds its full table when it does not embed it.
struct TableFileRef {
  std::string name;  // the file's name beside the page (report_table.js)
  std::string id;    // ties the page to the file it was written with
};

// The script's order of severity, per verdict code: error > warning >
// unmatched > pass.
int Severity(Verdict v);

// A number for the plot: 7 significant digits; NaN null, ±Inf "inf"/"-inf".
void WritePlotNumber(JsonWriter* w, double x);

// Where the step changes along the rows, for the plot: [[row, step], ...]
// from the first row on (at most kMaxStepMarks; [] when the rows hold one
// step or none, or more marks than that).
inline constexpr size_t kMaxStepMarks = 2000;
void WriteStepMarks(const CompareResult& r, JsonWriter* w);

// The module of the first divergence's entry (-1: none known, or no
// divergence, or an entry the target lacks).
int32_t DivergenceModule(const CompareResult& r);

// The module tree (MODULES below) with each module's worst row, or null when
// the result has no modules:
//   {"path": [str], "cls": [str], "parent": [node | -1],
//    "rows": [n] (rows inside it, its submodules' included),
//    "verdict": [0-3] (the most severe of them), "error": [x | null | "inf"]
//    (the largest row error), "row": [row] (the first row of that verdict),
//    "first": [row] (its first row; -1: none), "fd": node | -1 (the first
//    divergence's module), "outside": null | {"rows", "verdict", "error",
//    "row"} (rows of no module);
//    and when ModuleTreeStep(r) >= 0: "step": that step, "step_rows",
//    "step_verdict", "step_error", "step_row", "step_outside": the same
//    over that step's rows alone}
void WriteModules(const CompareResult& r, JsonWriter* w);

// The step the module tree shows first: the first divergence's, when the
// result has modules and rows of other steps too; else -1 (every step).
int ModuleTreeStep(const CompareResult& r);

// The JSON embedded in #report-data, already made safe for <script>:
//   {"summary": {summary_json.h object}, "columns": [str], "row_count": n,
//    "first_divergence_row": n | null,
//    "table": TABLE (every row, or with a table file a selection: the rows
//             around the first divergence and the first non-pass rows),
//    "table_file": null | {"name": str, "id": str, "rows": n},
//    "plot": {"index": [row], "verdict": [0-3] (both absent: every row,
//             verdicts from "table"), "metrics": {"cosine" |
//             "one_minus_cos" | "max_abs_err" | "max_rel_err": [x | null
//             (NaN) | "inf" | "-inf"], one per plotted row}}}
// With a table file the plot holds, per slice of the row range, the rows
// with each metric's extreme value and the most severe verdict.
// `file`: nullptr embeds the whole table.
std::string RenderReportData(const CompareResult& r, const TableFileRef* file);

// The table file (a script beside the page), whose id it sets in *id:
//   window.lockstepTable = {id: "<id>", table: JSON.parse('<TABLE>')};
// with every row; the id is the row count and the CRC-32 of TABLE.
std::string RenderTableFile(const CompareResult& r, std::string* id);

// A stack.json frame taken apart ("File {path}, line {line}, in {func}, \n
// {code}").
struct StackFrame {
  std::string path, line, func, code;
};
// Whether a frame's file belongs to a library (an installed package: torch,
// torchvision, msprobe; Python itself) rather than to the user's code.
bool IsLibraryFrame(std::string_view path);

// The first-divergence card's module line (#fd-module: the module path from
// the root, its class) and its call stack (#fd-stack: an <ol> of frames,
// class "frame user" or "frame lib"); "" when unknown.
std::string DivergenceModuleHtml(const CompareResult& r);
std::string DivergenceStackHtml(const FirstDivergence& fd);

// The "Across ranks" card (#ranks: the origin line #origin-line, the hops,
// and the heat grid #rank-heat of each (step, rank)'s worst row); "" when
// the origin across ranks was not analyzed (one rank).
std::string RanksCardHtml(const CompareResult& r);

// The style sheet (inside <style>). This and the scripts below are the files
// of src/report/assets/ (README.md there), embedded at build time.
extern const std::string_view kReportCss;
// The replay report's style sheet (replay_report.h): kReportCss, plus the
// replay tables': the same colours, a suspect row tinted and striped as an
// error.
extern const std::string_view kReplayCss;

// The script, in five parts concatenated inside one function scope: the
// data (decoding the table), the table view (state, filters, sorting,
// paging, URL fragment), the plot, the module tree, and the start-up code.
extern const std::string_view kReportScriptData;
extern const std::string_view kReportScriptTable;
extern const std::string_view kReportScriptPlot;
extern const std::string_view kReportScriptModules;
extern const std::string_view kReportScriptMain;

}  // namespace lockstep::internal

#endif  // LOCKSTEP_SRC_REPORT_HTML_INTERNAL_H_
