// lockstep overflow DUMP: entries with inf/nan or values saturated at the
// fp16/bf16 maximum, first origin first, with the entry's input statistics.
#include <cstdio>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/compare/overflow.h"
#include "lockstep/core/log.h"
#include "lockstep/format/discovery.h"
#include "lockstep/format/dump_reader.h"

namespace lockstep::cli {
namespace overflow_cmd {  // named: the CLI builds as a unity build
namespace {

void PrintRow(const char* tag, const OpRow& r) {
  std::printf("    %s %s %s %s max=%s min=%s mean=%s norm=%s\n", tag,
              EscapeControl(r.name).c_str(), EscapeControl(r.dtype).c_str(),
              EscapeControl(r.shape).c_str(),
              EscapeControl(r.stats[0].PyStr()).c_str(),
              EscapeControl(r.stats[1].PyStr()).c_str(),
              EscapeControl(r.stats[2].PyStr()).c_str(),
              EscapeControl(r.stats[3].PyStr()).c_str());
}

void PrintEntry(const OverflowReport& rep, const OverflowEntry& e, bool first) {
  std::printf("  %s%s [%s]%s\n", first ? "FIRST " : "",
              EscapeControl(e.entry).c_str(), OverflowKindName(e.kind),
              e.origin ? " (origin: inputs clean, outputs overflow)" : "");
  for (size_t i : e.bad_rows) PrintRow("overflow", rep.rows[i]);
  for (size_t i : e.inputs) PrintRow("input   ", rep.rows[i]);
}

// Returns the number of overflowing entries in one rank dump.
int64_t Analyze(const RankLayout& rank, int64_t step, bool all) {
  StatusOr<DumpFile> d = ReadDumpJson(rank.dump_json);
  if (!d.ok()) {
    LogError(d.status().message());
    return -1;
  }
  OverflowReport rep = AnalyzeOverflow(*d);
  std::string where = (step >= 0 ? "step " + std::to_string(step) + " " : "") +
                      "rank " + std::to_string(rank.rank);
  if (rep.entries.empty()) {
    std::printf("%s: no inf/nan or saturated values in %zu entries\n",
                where.c_str(), d->entries.size());
    return 0;
  }
  std::printf("%s: %zu entries overflow; first: %s", where.c_str(),
              rep.entries.size(), EscapeControl(rep.entries[0].entry).c_str());
  if (rep.first_origin >= 0) {
    std::printf(
        "; first origin (inputs clean, outputs overflow): %s",
        EscapeControl(rep.entries[static_cast<size_t>(rep.first_origin)].entry)
            .c_str());
  }
  std::printf("\n");
  for (size_t i = 0; i < rep.entries.size(); ++i) {
    if (!all && i == 20) {
      std::printf("  ... %zu more (use --all)\n", rep.entries.size() - 20);
      break;
    }
    PrintEntry(rep, rep.entries[i], i == 0);
  }
  return static_cast<int64_t>(rep.entries.size());
}

int Run(int argc, char** argv) {
  std::string path;
  bool all = false;
  LoggingOptions logging;
  CLI::App app{
      "List dump entries whose tensors hold inf/nan or values saturated at the "
      "fp16/bf16 "
      "maximum (NPU saturation mode turns inf into +-65504), in execution "
      "order, marking origins "
      "(inputs clean, outputs overflow), with each entry's input "
      "statistics.\nExit: 0 none found, 1 found, 3 "
      "unreadable.",
      "overflow"};
  app.footer("Example:\n  lockstep overflow npu_dump/step0 --all");
  app.add_option("DUMP", path, "dump.json, rank dir, step dir or dump root")
      ->required();
  app.add_flag("--all", all,
               "List every overflowing entry (default: the first 20)");
  AddLoggingOptions(app, &logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(logging);
  StatusOr<DumpLayout> layout = DiscoverDump(path);
  if (!layout.ok()) return ReportError(layout.status());
  for (const auto& w : layout->warnings) LogWarning(w);
  int64_t found = 0;
  bool any_read = false;
  for (const auto& step : layout->steps) {
    for (const auto& rank : step.ranks) {
      int64_t n = Analyze(rank, step.step, all);
      if (n >= 0) any_read = true, found += n;
    }
  }
  if (!any_read) return kExitIo;
  std::printf("overflow: %lld overflowing entries\n",
              static_cast<long long>(found));
  return found > 0 ? kExitDiverged : kExitPass;
}

}  // namespace
}  // namespace overflow_cmd

int RunOverflow(int argc, char** argv) { return overflow_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
