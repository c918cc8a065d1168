// lockstep compare TARGET BASELINE -o DIR: a thin shell over
// lockstep::CompareDumpRows (CompareDumpRowsShared among MPI processes),
// FinishResult and the report writers: its command line and the checks
// before the heavy work; the compare and its reports are in
// compare_reports.cc.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "cli/compare_cmd_internal.h"
#include "lockstep/compare/checkpoint_compare.h"
#include "lockstep/compare/compare_share.h"
#include "lockstep/compare/layer_mapping.h"
#include "lockstep/compare/partial_result.h"
#include "lockstep/core/file.h"
#include "lockstep/core/log.h"
#include "lockstep/core/parallel.h"
#include "lockstep/core/progress.h"
#include "lockstep/curve/curve_compare.h"
#include "lockstep/curve/curve_plot.h"
#include "lockstep/curve/readers.h"
#include "lockstep/format/api_mapping_file.h"
#include "lockstep/format/checkpoint.h"
#include "lockstep/format/yaml_mapping.h"

namespace lockstep::cli {
namespace compare_cmd {  // named: the CLI builds as a unity build
namespace {

// The loss curves of the two runs as an SVG for report.html, when both logs
// were given ("" when neither). Reads and compares them with the curve layer.
StatusOr<std::string> CurvesSvg(const Args& a) {
  if (a.target_log.empty() && a.baseline_log.empty()) return std::string();
  if (a.target_log.empty() || a.baseline_log.empty()) {
    return Status::InvalidArgument("--target-log/--baseline-log",
                                   "give both logs or neither");
  }
  LOCKSTEP_ASSIGN_OR_RETURN(CurveLog baseline, ReadCurveLog(a.baseline_log));
  LOCKSTEP_ASSIGN_OR_RETURN(CurveLog target, ReadCurveLog(a.target_log));
  CurveCompareOptions o;
  o.metric = a.curve_metric;
  LOCKSTEP_ASSIGN_OR_RETURN(CurveComparison c,
                            CompareCurves({baseline, target}, o));
  LogInfo("curves: " + CurveVerdict(c));
  return RenderCurveSvg(c, kWideCurvePlot);
}

// TARGET/BASELINE, or msprobe's -tp/-gp in place of either.
Status ResolveInputs(Args* a) {
  for (auto [file, flag] : {std::pair(&a->api_mapping_file, "am"),
                            std::pair(&a->layer_mapping, "lm")}) {
    if (file->empty() ||
        !(std::filesystem::is_directory(*file) || file->ends_with(".json")))
      continue;
    // `compare -am TARGET BASELINE`: -am took the target as its FILE.
    return Status::InvalidArgument(
        std::string(flag[0] == 'a' ? "--api-mapping " : "--layer-mapping ") +
            *file,
        std::string("-") + flag +
            " takes an optional mapping FILE and read this dump as one. "
            "Note: put -" +
            flag +
            " after the two dumps (compare TARGET "
            "BASELINE -" +
            flag + ")");
  }
  std::vector<std::string> positional;
  for (const std::string* p : {&a->target, &a->baseline}) {
    if (!p->empty()) positional.push_back(*p);
  }
  size_t needed =
      (a->target_path.empty() ? 1 : 0) + (a->golden_path.empty() ? 1 : 0);
  if (positional.size() != needed) {
    return Status::InvalidArgument(
        "compare",
        "give TARGET and BASELINE once each (as arguments, or with -tp and "
        "-gp). Note: run 'lockstep compare --help'");
  }
  size_t k = 0;
  a->target = a->target_path.empty() ? positional[k++] : a->target_path;
  a->baseline = a->golden_path.empty() ? positional[k++] : a->golden_path;
  return Status::Ok();
}

StatusOr<CompareOptions> MakeOptions(const Args& a) {
  CompareOptions o;
  o.steps = a.steps;
  o.ranks = a.ranks;
  if (a.layer_mapped && (a.api_mapping || !a.cell_mapping.empty() ||
                         !a.data_mapping.empty() || a.fuzzy || a.align)) {
    return Status::InvalidArgument(
        "--layer-mapping",
        "makes each rank's data mapping itself: not with --api-mapping, "
        "--cell-mapping, --data-mapping, --fuzzy-match or --align (msprobe "
        "lets -lm replace -dm and -am/-cm replace -lm's pairs)");
  }
  bool name_mapped = a.api_mapping || !a.cell_mapping.empty();
  if (name_mapped && (a.fuzzy || a.align || !a.data_mapping.empty())) {
    return Status::InvalidArgument(
        a.api_mapping ? "--api-mapping" : "--cell-mapping",
        "pairs rows by mapped names: not with --fuzzy-match, --align or "
        "--data-mapping");
  }
  if (!a.data_mapping.empty() && (a.fuzzy || a.align)) {
    return Status::InvalidArgument("--data-mapping",
                                   "pairs rows itself: not with --fuzzy-match "
                                   "or --align");
  }
  if (a.fuzzy && a.align) {
    return Status::InvalidArgument("--fuzzy-match with --align",
                                   "choose one way of matching rows");
  }
  if (a.align && a.no_align) {
    return Status::InvalidArgument("--align with --no-align",
                                   "choose one of them");
  }
  if (a.mode == "tensor")
    o.mode = CompareMode::kTensor;
  else if (a.mode == "statistics")
    o.mode = CompareMode::kStatistics;
  else if (a.mode == "md5")
    o.mode = CompareMode::kMd5;
  else if (a.mode != "auto") {
    return Status::InvalidArgument(
        "--mode " + a.mode,
        "unknown mode. Note: use auto, tensor, statistics or md5");
  }
  o.api_mapping = a.api_mapping;
  o.layer_mapping = a.layer_mapped;
  if (!a.layer_mapping.empty()) {
    LOCKSTEP_ASSIGN_OR_RETURN(auto rules, ReadLayerRules(a.layer_mapping));
    o.layer_rules = std::make_shared<const LayerRules>(std::move(rules));
  }
  if (!a.api_mapping_file.empty()) {
    LOCKSTEP_ASSIGN_OR_RETURN(auto entries,
                              ReadApiMappingFile(a.api_mapping_file));
    std::vector<std::string> warnings;
    size_t read = entries.size();
    auto usable = UsableApiMappings(std::move(entries), &warnings);
    for (const std::string& w : warnings) LogWarning(w);
    LogInfo("API mapping: " + std::to_string(usable.size()) + " of " +
            std::to_string(read) + " entries used, on top of msprobe's " +
            "built-in names (" + a.api_mapping_file + ")");
    o.api_mapping_entries =
        std::make_shared<const std::vector<ApiMappingEntry>>(std::move(usable));
  }
  if (!a.cell_mapping.empty()) {
    LOCKSTEP_ASSIGN_OR_RETURN(auto pairs, ReadYamlMapping(a.cell_mapping));
    if (a.api_mapping) {
      LogWarning(
          "--cell-mapping is ignored with --api-mapping (as msprobe "
          "does: the API mapping wins)");
    } else {
      LogInfo("cell mapping: " + std::to_string(pairs.size()) +
              " cells mapped to modules (" + a.cell_mapping + ")");
      o.cell_mapping = std::make_shared<CellMapping>(std::move(pairs));
    }
  }
  if (!a.data_mapping.empty()) {
    LOCKSTEP_ASSIGN_OR_RETURN(auto pairs, ReadYamlMapping(a.data_mapping));
    auto map = std::make_shared<std::unordered_map<std::string, std::string>>(
        pairs.begin(), pairs.end());
    LogInfo("data mapping: " + std::to_string(map->size()) +
            " target rows mapped to baseline rows (" + a.data_mapping + ")");
    o.data_mapping = std::move(map);
  }
  if (a.jobs < 0)
    return Status::InvalidArgument("--jobs", "must be >= 1 (0: all cores)");
  o.jobs = a.jobs == 0 ? HardwareThreads() : a.jobs;
  o.fuzzy_match = a.fuzzy;
  o.fuzzy_rule =
      a.fuzzy_rule == "1.2.2" ? FuzzyRule::kStructures : FuzzyRule::kMsprobe;
  o.align = a.align      ? AlignMode::kOn
            : a.no_align ? AlignMode::kOff
                         : AlignMode::kAuto;
  o.renumber_params_grad = a.renumber;
  auto progress = std::make_shared<Progress>("compare", "rows");
  o.progress = [progress](size_t done, size_t total) {
    progress->Update(done, total);
  };
  auto reading = std::make_shared<Progress>("compare: reading dump.json", "MB");
  o.read_progress = [reading](size_t done, size_t total) {
    // Whole MB, rounded up: a small file is 1 MB, not 0.
    reading->Update((done + 999999) / 1000000, (total + 999999) / 1000000);
  };
  return o;
}

// True when TARGET and BASELINE are checkpoints (by content: torch.save
// archives, safetensors files, shard directories); either one makes the
// compare a checkpoint compare, which then says what the other is not.
bool AreCheckpoints(const Args& a) {
  return DetectCheckpoint(a.target) != CheckpointKind::kNone ||
         DetectCheckpoint(a.baseline) != CheckpointKind::kNone;
}

// Dump-only options given to a checkpoint compare.
Status CheckCheckpointOptions(const Args& a) {
  if (a.mode != "auto" && a.mode != "tensor") {
    return Status::InvalidArgument(
        "--mode " + a.mode,
        "checkpoints are compared tensor by tensor. Note: leave --mode out");
  }
  if (a.fuzzy || a.align || a.no_align || a.renumber ||
      !a.data_mapping.empty() || a.api_mapping || !a.cell_mapping.empty() ||
      a.layer_mapped || !a.steps.empty() || !a.ranks.empty()) {
    return Status::InvalidArgument(
        "--fuzzy-match/--fuzzy-rule/--align/--no-align/"
        "--renumber-params-grad/--data-mapping/--api-mapping/"
        "--cell-mapping/--layer-mapping/--step/--rank",
        "dump options; checkpoints are matched by parameter name");
  }
  return Status::Ok();
}

// Every check before the heavy work; `writer`: this process writes the
// reports (it makes and locks the output directory).
Status Prepare(Args* a, bool writer, Prepared* p) {
  LOCKSTEP_RETURN_IF_ERROR(ResolveInputs(a));
  // Missing inputs are said before the output directory is made (it may
  // be the default ./output, which a typo must not leave behind).
  for (const std::string* path : {&a->target, &a->baseline}) {
    std::error_code ec;
    if (!std::filesystem::exists(*path, ec)) {
      return Status::NotFound(*path,
                              "no such file or directory (TARGET and "
                              "BASELINE are dumps: dump.json, a rank, "
                              "step or root directory; or checkpoints)");
    }
  }
  p->checkpoints = AreCheckpoints(*a);
  if (p->checkpoints) LOCKSTEP_RETURN_IF_ERROR(CheckCheckpointOptions(*a));
  LOCKSTEP_ASSIGN_OR_RETURN(p->options, MakeOptions(*a));
  if (!writer) return Status::Ok();  // only it draws the curves, writes
  LOCKSTEP_ASSIGN_OR_RETURN(p->curves_svg, CurvesSvg(*a));
  // The output directory is ours for the whole run (before the heavy work).
  LOCKSTEP_RETURN_IF_ERROR(CreateDirs(a->out_dir));
  LOCKSTEP_ASSIGN_OR_RETURN(p->lock, DirLock::Acquire(a->out_dir));
  std::vector<std::string> stale = p->lock->RemoveStaleTempFiles();
  if (!stale.empty()) {
    LogWarning(a->out_dir + ": removed " + std::to_string(stale.size()) +
               " temporary file(s) of an interrupted run (" +
               Abbreviate(stale[0], 120) + (stale.size() > 1 ? ", ..." : "") +
               ")");
  }
  return Status::Ok();
}

// Every process's `mine` agreed: Ok, or the first process's error.
Status Agree(const Status& mine, ShareGroup* group) {
  for (const std::string& s : group->AllGather(EncodeStatus(mine))) {
    Status st = DecodeStatus(s);
    if (!st.ok()) return st;
  }
  return Status::Ok();
}

int Run(int argc, char** argv, ShareGroup* group) {
  Args a;
  CLI::App app{
      "Compare two runs' operator dumps (msprobe layout) and find the first "
      "divergent "
      "operator.\nTARGET and BASELINE may be a dump.json, a rank dir (rank0/, "
      "proc123/), a step "
      "dir or a dump root (step*/rank*).\nWrites compare_result_<ts>.csv "
      "(msprobe HEAD columns), "
      "summary.json and report.html into DIR.\nExit: 0 all rows pass and "
      "nothing is missing, 1 divergence (or steps or ops missing from the "
      "target), 2 usage error, 3 nothing readable.\nTARGET and BASELINE "
      "may also be two checkpoints (torch.save state_dicts or checkpoints, "
      "safetensors files, or directories of their shards), compared "
      "parameter by parameter.\n\nExamples:\n  lockstep "
      "compare npu_dump/ gpu_dump/ -o out/\n  lockstep compare -tp "
      "npu_dump/step0 -gp gpu_dump/step0 --rank 0 -dm map.yaml   "
      "(msprobe's flags)\n  lockstep compare new.pt old.pt -o out/",
      "compare"};
  app.add_option("TARGET", a.target, "The run under test (msprobe: NPU)");
  app.add_option("BASELINE", a.baseline, "The reference run (msprobe: bench)");
  app.add_option("-o,--output,--output_path", a.out_dir,
                 "Output directory (created)")
      ->capture_default_str();
  app.add_option("--target-path,--target_path", a.target_path,
                 "TARGET as msprobe's -tp gives it")
      ->group("msprobe's names");
  app.add_option("--golden-path,--golden_path", a.golden_path,
                 "BASELINE as msprobe's -gp gives it")
      ->group("msprobe's names");
  CLI::Option* am =
      app.add_option("--api-mapping,--api_mapping", a.api_mapping_file,
                     "msprobe's -am, for a MindSpore target against a "
                     "PyTorch baseline: match MindSpore API names to "
                     "PyTorch ones with msprobe's built-in table (Mint.cos "
                     "-> Torch.cos, Functional.add -> Torch.add); with a "
                     "YAML FILE (`- ms_api: ...`, `pt_api: ...`, `ms_args: "
                     "[0, 1]`, `pt_args: [1, 0]`, ms_/pt_output, "
                     "parameters), also the APIs and arguments it names. "
                     "Give -am after the two dumps")
          ->expected(0, 1);
  app.add_option("--cell-mapping,--cell_mapping", a.cell_mapping,
                 "msprobe's -cm: a YAML file of `cell.Class: module.Class` "
                 "lines; MindSpore Cell rows are matched to these PyTorch "
                 "Module rows");
  CLI::Option* lm =
      app.add_option("--layer-mapping,--layer_mapping", a.layer_mapping,
                     "msprobe's -lm, for a MindSpore target against a "
                     "PyTorch baseline: pair calls by their place in the "
                     "two models (construct.json and stack.json beside each "
                     "dump.json), with a YAML FILE of renames per class "
                     "(`ParallelAttention:` / `  flash_attention_score: "
                     "core_attention_flash.npu_fusion_attention`), or none. "
                     "Give -lm after the two dumps")
          ->expected(0, 1);
  app.add_option("--data-mapping,--data_mapping", a.data_mapping,
                 "msprobe's -dm: a YAML file of `target row: baseline row` "
                 "lines; those rows are compared with each other (no dtype "
                 "gate, no alignment), the others by name");
  app.add_option("--step", a.steps,
                 "Compare only these steps (e.g. --step 0,3)")
      ->delimiter(',');
  app.add_option("--rank", a.ranks, "Compare only these ranks (e.g. --rank 0)")
      ->delimiter(',');
  app.add_option("--mode", a.mode,
                 "auto|tensor|statistics|md5 (auto: from the dumps)")
      ->capture_default_str();
  app.add_flag("--fuzzy-match,--fuzzy_match", a.fuzzy,
               "Pair rows by name without the call index, in order, as "
               "msprobe 26's -fm does (shapes are not looked at)");
  app.add_option("--fuzzy-rule", a.fuzzy_rule,
                 "msprobe (default with --fuzzy-match: as msprobe 26) or "
                 "1.2.2 (msprobe 1.2.2's -fm: calls pair only when their "
                 "shapes and dtypes agree too, so an inserted call of the "
                 "same API stays unpaired); implies --fuzzy-match")
      ->check(CLI::IsMember({"msprobe", "1.2.2"}));
  app.add_flag(
      "--align", a.align,
      "Always align the op streams (default: only when they differ, "
      "e.g. an op inserted, removed, fused or decomposed on one side)");
  app.add_flag("--no-align", a.no_align,
               "Never align: match rows by name only, as msprobe does");
  app.add_flag("--renumber-params-grad", a.renumber,
               "Renumber parameters_grad entries by occurrence (compare "
               "different steps)");
  app.add_option("-j,--jobs", a.jobs, "Threads (0: all cores)")
      ->capture_default_str();
  app.add_flag("--xlsx", a.xlsx,
               "Also write the table as .xlsx (errors red, warnings yellow)");
  app.add_option("--target-log", a.target_log,
                 "Training log of the target run (trainer_state.json, "
                 "Megatron stdout, CSV, JSONL, TensorBoard events): its "
                 "curve goes into report.html")
      ->group("Loss curves");
  app.add_option("--baseline-log", a.baseline_log,
                 "Training log of the baseline run")
      ->group("Loss curves");
  app.add_option("--curve-metric", a.curve_metric, "Metric of the logs to plot")
      ->transform(CanonicalMetric())
      ->capture_default_str()
      ->group("Loss curves");
  AddLoggingOptions(app, &a.logging);
  // msprobe's two-letter flags (CLI11 takes one letter after a dash).
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> argp;
  for (std::string& s : args) {
    if (s == "-tp") s = "--target-path";
    if (s == "-gp") s = "--golden-path";
    if (s == "-fm") s = "--fuzzy-match";
    if (s == "-dm") s = "--data-mapping";
    if (s == "-am") s = "--api-mapping";
    if (s == "-cm") s = "--cell-mapping";
    if (s == "-lm") s = "--layer-mapping";
    argp.push_back(s.data());
  }
  if (int rc = ParseOrExit(app, argc, argp.data()); rc >= 0) return rc;
  a.api_mapping = am->count() > 0;
  a.layer_mapped = lm->count() > 0;
  a.fuzzy = a.fuzzy || !a.fuzzy_rule.empty();
  ApplyLoggingOptions(a.logging);
  Prepared p;
  Status ready = Prepare(&a, group == nullptr || group->index() == 0, &p);
  if (group != nullptr) ready = Agree(ready, group);
  if (!ready.ok()) return ReportError(ready);
  int code = Compare(a, p, group);
  if (group == nullptr) return code;
  // Process 0 wrote the reports; every process exits with its code.
  std::vector<std::string> codes = group->AllGather(
      group->index() == 0 ? std::to_string(code) : std::string());
  return std::atoi(codes[0].c_str());
}

}  // namespace
}  // namespace compare_cmd

int RunCompareShared(int argc, char** argv, ShareGroup* group) {
  return compare_cmd::Run(argc, argv, group);
}

}  // namespace lockstep::cli
