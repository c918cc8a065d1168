// lockstep export DUMP -o DIR: a dump in msprobe's layout (dump.json and one
// tensor file each under dump_tensor_data/), from any dump lockstep reads,
// packed ones included (lockstep/format/export.h).
#include <cstdio>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/core/log.h"
#include "lockstep/format/export.h"

namespace lockstep::cli {
namespace export_cmd {  // named: the CLI builds as a unity build
namespace {

int Run(int argc, char** argv) {
  std::string path, out, format = "pt";
  LoggingOptions logging;
  CLI::App app{
      "Write a dump in msprobe's directory layout (what tools that expect "
      "one file per tensor read): each rank's dump.json, stack.json and "
      "construct.json copied, and "
      "each tensor of its dump_tensor_data.pack (a probe's packed tensor "
      "mode) written as its own file under dump_tensor_data/: .pt as "
      "torch.save writes it (the default; msprobe's PyTorch compare loads "
      ".pt only), dump.json's data_names renamed to match, or .npy with "
      "--tensor-format npy. Tensor files of a dump_tensor_data/ directory "
      "are copied as they are. The output must not exist; it appears whole "
      "or not at all (docs/packed_format.md).\nExit: 0 "
      "exported, 2 usage error, 3 unreadable or damaged dump, or a write "
      "failed.\n\nExample:\n  lockstep export run_a -o run_a_msprobe",
      "export"};
  app.add_option("DUMP", path, "dump.json, rank dir, step dir or dump root")
      ->required();
  app.add_option("-o,--output", out, "New directory to write")->required();
  app.add_option("--tensor-format", format,
                 "Files made from a pack's tensors: pt (torch.save, what "
                 "msprobe's PyTorch compare reads) or npy (numpy.save)")
      ->capture_default_str()
      ->check(CLI::IsMember({"pt", "npy"}));
  AddLoggingOptions(app, &logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(logging);
  ExportOptions options;
  options.tensor_format =
      format == "npy" ? TensorFileFormat::kNpy : TensorFileFormat::kPt;
  StatusOr<ExportSummary> s = ExportDump(path, out, options);
  if (!s.ok()) return ReportError(s.status());
  for (const auto& w : s->warnings) LogWarning(w);
  std::printf(
      "exported %lld rank dump(s) (%lld from packs), %lld tensor files "
      "(%lld bytes) to %s\n",
      static_cast<long long>(s->ranks), static_cast<long long>(s->packed_ranks),
      static_cast<long long>(s->tensors), static_cast<long long>(s->bytes),
      EscapeControl(out).c_str());
  return kExitPass;
}

}  // namespace
}  // namespace export_cmd

int RunExport(int argc, char** argv) { return export_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
