// lockstep audit: measures LibTorch operators against correctly rounded MPFR
// references (lockstep/torch/op_audit.h) and prints one line per operator.
//
// Exit codes: 0 every audited op passes (skipped ops, e.g. "not implemented
// for Half on cpu", do not fail); 1 an op fails msprobe's ULP or benchmark
// standard or a downstream check (range, NaN/inf, 1 + cos(fl(pi)) >= 0, ...);
// 2 usage error, also --device cuda where LibTorch sees no CUDA device;
// 3 the --json file cannot be written.
#include <ATen/Parallel.h>

#include <cstdio>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/core/file.h"
#include "lockstep/core/log.h"
#include "lockstep/core/progress.h"
#include "lockstep/numerics/dtype.h"
#include "lockstep/torch/op_audit.h"

namespace lockstep::cli {
namespace audit_cmd {  // named: the CLI builds as a unity build
namespace {

struct Options {
  std::string ops, dtype = "float32", device = "cpu", json;
  size_t samples = 1 << 16;
  int threads = 2;
  uint64_t seed = 1;
};

std::vector<std::string> SplitOps(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string op;
  while (std::getline(in, op, ',')) {
    if (!op.empty()) out.push_back(op);
  }
  return out;
}

AuditOptions ToAuditOptions(const Options& o) {
  AuditOptions a;
  a.ops = SplitOps(o.ops);
  a.dtype = o.dtype == "bfloat16"  ? DType::kBFloat16
            : o.dtype == "float16" ? DType::kFloat16
                                   : DType::kFloat32;
  a.device = o.device;
  a.samples = o.samples;
  a.seed = o.seed;
  a.threads = o.threads;
  return a;
}

void PrintVerdict(const std::vector<OpAudit>& audits, const Options& o) {
  size_t failed = 0, skipped = 0;
  for (const OpAudit& a : audits) {
    failed += !a.Passed();
    skipped += !a.skipped.empty();
  }
  std::string line = "audit " + o.dtype + " on " + o.device + ": " +
                     std::to_string(audits.size()) + " ops, " +
                     std::to_string(failed) + " failed, " +
                     std::to_string(skipped) + " skipped";
  if (failed == 0) {
    LogInfo("PASS " + line);
  } else {
    LogError("FAIL " + line);
  }
}

int Run(int argc, char** argv) {
  Options o;
  LoggingOptions logging;
  CLI::App app{
      "Measure LibTorch operators against correctly rounded MPFR references: "
      "max/mean ulp error, worst inputs, msprobe's accuracy standards and "
      "downstream checks such as 1 + cos(fl(pi)) >= 0.\nExit: 0 all pass, 1 "
      "an op failed, 2 usage error (also --device cuda without CUDA), 3 I/O.",
      "audit"};
  app.add_option("--ops", o.ops, "Comma-separated operators (default: all)");
  app.add_option("--dtype", o.dtype, "float32 (default), bfloat16, float16")
      ->check(CLI::IsMember({"float32", "bfloat16", "float16"}));
  app.add_option("--device", o.device, "cpu (default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--json", o.json, "Write the results as JSON to FILE");
  app.add_option("--samples", o.samples,
                 "float32 random inputs per op (default 65536; 16-bit "
                 "dtypes are exhaustive)")
      ->check(CLI::Range(size_t{16}, size_t{1} << 24));
  app.add_option("-j,--jobs,--threads", o.threads,
                 "Threads (default 2; --threads is the old name)")
      ->check(CLI::Range(1, 256));
  app.add_option("--seed", o.seed, "Seed of the random inputs (default 1)");
  AddLoggingOptions(app, &logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(logging);
  if (!o.json.empty()) {  // before minutes of work, not after
    if (Status s = CheckOutputFile(o.json); !s.ok()) return ReportError(s);
  }
  at::set_num_threads(o.threads);
  AuditOptions options = ToAuditOptions(o);
  auto progress = std::make_unique<Progress>("audit", "ops");
  options.progress = [&](size_t done, size_t total) {
    progress->Update(done, total);
  };
  StatusOr<std::vector<OpAudit>> audits = ::lockstep::RunAudit(options);
  progress.reset();  // ends the bar's line before the table
  if (!audits.ok()) return ReportError(audits.status());
  std::printf("%s", FormatAuditTable(*audits).c_str());
  if (!o.json.empty()) {
    Status s = WriteFileAtomic(o.json, AuditToJson(*audits));
    if (!s.ok()) return ReportError(s);
  }
  std::fflush(stdout);  // the table before the verdict on stderr
  PrintVerdict(*audits, o);
  for (const OpAudit& a : *audits) {
    if (!a.Passed()) return kExitDiverged;
  }
  return kExitPass;
}

}  // namespace
}  // namespace audit_cmd

int RunAudit(int argc, char** argv) { return audit_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
