// lockstep: find where two training runs part ways.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common_options.h"

namespace {

void PrintUsage() {
  std::printf(
      "lockstep: find where two deep-learning training runs part ways.\n\n"
      "Usage: lockstep <command> [options]\n\n"
      "Commands:\n"
      "  compare   compare two operator dumps (msprobe layout); find the "
      "first\n"
      "            divergent operator; write CSV, summary.json and "
      "report.html\n"
      "  overflow  list dump entries with inf/nan or values saturated at the\n"
      "            fp16/bf16 maximum, first one first\n"
      "  inspect   show what a dump holds\n"
      "  export    write a dump (a packed one too) in msprobe's layout:\n"
      "            one .pt (or .npy) file per tensor under dump_tensor_data/\n"
      "  curve     compare training loss curves (HuggingFace, Megatron, CSV,\n"
      "            JSONL, TensorBoard logs) step by step; plot them\n"
      "  rng       print a reproducible Philox random stream (uint32, "
      "uniform,\n"
      "            normal, bernoulli), bit-identical on every machine\n"
      "  schedule  print a learning-rate schedule (cosine decay, warm "
      "restarts,\n"
      "            one-cycle, warmup variants, ...) as step,lr; plot it\n"
#ifdef LOCKSTEP_TORCH_HELPER
      "  audit     measure LibTorch operators (cos, exp, softmax, ...) "
      "against\n"
      "            correctly rounded MPFR references: ulp errors, msprobe's\n"
      "            accuracy standards, 1 + cos(fl(pi)) >= 0\n"
      "  replay    re-run every operator of a tensor dump in float64 and\n"
      "            name the ones that are wrong for their own inputs (no\n"
      "            baseline needed)\n"
      "  env       capture this machine's environment fingerprint (LibTorch,\n"
      "            BLAS, CPU, threads, numerics variables, seeds); diff two\n"
      "            of them, most likely to change numbers first\n"
#else
      "  env       diff two environment fingerprints (env.json), most\n"
      "            likely to change numbers first\n"
#endif
      "\n"
      "Run 'lockstep help <command>' (or 'lockstep <command> --help') for\n"
      "the options of a command and an example; 'lockstep --version'.\n"
      "Exit codes: 0 pass, 1 divergence or failed check, 2 usage error,\n"
      "3 I/O or format error.\n");
}

constexpr char kOutOfMemory[] =
    "[E] lockstep | out of memory. Note: the readers bound what each file may "
    "cost (docs/compare.md, 'Dumps from someone else'); if an input made "
    "lockstep run out anyway, please report it as a bug\n";

// The last resort where an allocation failed on a worker thread, beyond
// main's catch: a short message and exit code 3, not an abort and a core.
[[noreturn]] void OnTerminate() {
  bool oom = false;
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      oom = true;
    } catch (...) {
    }
  }
  if (oom) {
    ssize_t ignored = ::write(2, kOutOfMemory, sizeof(kOutOfMemory) - 1);
    (void)ignored;
    ::_exit(3);
  }
  std::abort();
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(OnTerminate);
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 ||
      std::strcmp(argv[1], "-h") == 0) {
    PrintUsage();
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  if (cmd == "--version" || cmd == "-V" || cmd == "version") {
    std::printf("lockstep %s\n", LOCKSTEP_VERSION);
    return 0;
  }
  // `lockstep help compare` is `lockstep compare --help`.
  char help_flag[] = "--help";
  char* help_argv[] = {argv[0], argc > 2 ? argv[2] : nullptr, help_flag,
                       nullptr};
  if (cmd == "help") {
    if (argc < 3) {
      PrintUsage();
      return 0;
    }
    cmd = argv[2];
    argc = 3;
    argv = help_argv;
  }
  std::vector<std::string> names;
  for (const auto& c : lockstep::cli::Commands()) {
    if (cmd != c.name) {
      names.push_back(c.name);
      continue;
    }
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const std::bad_alloc&) {
      std::fputs(kOutOfMemory, stderr);
      return 3;
    }
  }
  std::string close = lockstep::ClosestWord(cmd, names);
  std::fprintf(stderr, "[E] lockstep | unknown command '%s'. Note: %s\n",
               cmd.c_str(),
               close.empty() ? "run 'lockstep --help'"
                             : ("did you mean '" + close + "'?").c_str());
  return 2;
}
