// lockstep inspect DUMP: what a dump holds.
#include <cstdio>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/compare/inspect.h"
#include "lockstep/core/log.h"

namespace lockstep::cli {
namespace inspect_cmd {  // named: the CLI builds as a unity build
namespace {

std::string Bytes(int64_t b) {
  char buf[32];
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  std::snprintf(buf, sizeof(buf), u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

void PrintRank(const RankSummary& r) {
  std::printf(
      "%s%s (%s)\n",
      r.step >= 0 ? ("step " + std::to_string(r.step) + " ").c_str() : "",
      ("rank " + std::to_string(r.rank)).c_str(), EscapeControl(r.dir).c_str());
  if (!r.error.empty()) {
    std::printf("  unreadable: %s\n", EscapeControl(r.error).c_str());
    return;
  }
  std::printf("  task %s, level %s, framework %s\n",
              EscapeControl(r.task).c_str(), EscapeControl(r.level).c_str(),
              EscapeControl(r.framework).c_str());
  // The kinds add up to the entries: parameters_grad and other only when
  // there are any.
  std::string kinds = "forward " + std::to_string(r.forward_entries) +
                      ", backward " + std::to_string(r.backward_entries);
  if (r.parameters_grad_entries > 0)
    kinds += ", parameters_grad " + std::to_string(r.parameters_grad_entries);
  if (r.other_entries > 0)
    kinds += ", other " + std::to_string(r.other_entries);
  std::printf("  entries %lld (%s), rows %lld\n",
              static_cast<long long>(r.entries), kinds.c_str(),
              static_cast<long long>(r.rows));
  std::printf("  tensors %lld, %s by shape", static_cast<long long>(r.tensors),
              Bytes(r.tensor_bytes).c_str());
  if (!r.pack_error.empty()) {
    std::printf("; dump_tensor_data.pack unreadable: %s",
                EscapeControl(r.pack_error).c_str());
  } else if (r.packed) {
    std::printf("; %lld in dump_tensor_data.pack (%s)",
                static_cast<long long>(r.tensor_files),
                Bytes(r.tensor_file_bytes).c_str());
  } else if (r.tensor_files > 0) {
    std::printf("; %lld files in dump_tensor_data (%s)",
                static_cast<long long>(r.tensor_files),
                Bytes(r.tensor_file_bytes).c_str());
  }
  std::printf("\n  dtypes:");
  for (const auto& [d, n] : r.dtypes)
    std::printf(" %s x%lld", EscapeControl(d).c_str(),
                static_cast<long long>(n));
  std::printf("\n  stack.json %s, construct.json %s\n",
              r.has_stack ? "yes" : "no", r.has_construct ? "yes" : "no");
}

int Run(int argc, char** argv) {
  std::string path;
  LoggingOptions logging;
  CLI::App app{
      "Show what a dump holds: steps, ranks, entries, tensors, bytes, dtypes.",
      "inspect"};
  app.footer("Example:\n  lockstep inspect npu_dump/step0");
  app.add_option("DUMP", path, "dump.json, rank dir, step dir or dump root")
      ->required();
  AddLoggingOptions(app, &logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(logging);
  StatusOr<DumpSummary> s = InspectDump(path);
  if (!s.ok()) return ReportError(s.status());
  for (const auto& w : s->warnings) LogWarning(w);
  std::printf("dump %s: %zu rank dump(s)\n", EscapeControl(s->root).c_str(),
              s->ranks.size());
  bool all_bad = true;
  for (const auto& r : s->ranks) {
    PrintRank(r);
    all_bad &= !r.error.empty();
  }
  return all_bad ? kExitIo : kExitPass;
}

}  // namespace
}  // namespace inspect_cmd

int RunInspect(int argc, char** argv) { return inspect_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
