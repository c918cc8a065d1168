// Statistics compare at LLM scale, as a user runs it: `lockstep compare` of
// two dump.json files of N entries each (one input and one output tensor
// per entry, statistics only; the baseline's values differ slightly),
// against Python's json.load of the same two files, in one run. The dumps
// are written once under LOCKSTEP_STATS_DIR (default /tmp/lockstep_stats);
// LOCKSTEP_STATS_ENTRIES sets N (default 200000, ~170 MB a file).
//
//   build/bin/stats_compare_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
//
// Counters: peak_rss_MiB of the compare (GNU time), KB_per_row, and for the
// json.load baseline nothing but its time. Ratio to report: compare time
// over json.load time (the target is 0.5).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string Dir() {
  const char* d = std::getenv("LOCKSTEP_STATS_DIR");
  return d ? d : "/tmp/lockstep_stats";
}

long Entries() {
  const char* n = std::getenv("LOCKSTEP_STATS_ENTRIES");
  return n ? std::atol(n) : 200000;
}

// One tensor's statistics as msprobe writes them.
void Tensor(std::ofstream& out, double scale) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\n     \"type\": \"torch.Tensor\",\n     \"dtype\": "
                "\"torch.bfloat16\",\n     \"shape\": [\n      8,\n      "
                "1024\n     ],\n     \"Max\": %.9g,\n     \"Min\": %.9g,\n"
                "     \"Mean\": %.9g,\n     \"Norm\": %.9g,\n     "
                "\"requires_grad\": true\n    }",
                3.25 * scale, -3.125 * scale, 0.0123 * scale, 90.5 * scale);
  out << buf;
}

void Write(const std::string& path, long n, double scale) {
  std::ofstream out(path);
  out << "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n "
         "\"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n "
         "\"data\": {\n";
  const char* ops[] = {"Functional.linear", "Torch.matmul", "Tensor.add",
                       "Functional.layer_norm", "Functional.gelu"};
  for (long i = 0; i < n; ++i) {
    out << "  \"" << ops[i % 5] << "." << i / 5 << ".forward\": {\n"
        << "   \"input_args\": [\n    ";
    Tensor(out, scale);
    out << "\n   ],\n   \"input_kwargs\": {},\n   \"output\": [\n    ";
    Tensor(out, scale * (1 + 1e-4 * (i % 7)));
    out << "\n   ]\n  }" << (i + 1 < n ? ",\n" : "\n");
  }
  out << " }\n}\n";
}

void Generate() {
  std::string marker = Dir() + "/entries_" + std::to_string(Entries());
  if (fs::exists(marker)) return;
  fs::remove_all(Dir());
  for (const char* side : {"target", "baseline"}) {
    fs::create_directories(Dir() + "/" + side);
    Write(Dir() + "/" + side + "/dump.json", Entries(),
          side[0] == 't' ? 1.0 : 1.0 + 1e-6);
  }
  std::ofstream(marker) << "ok\n";
}

// Runs `cmd` under GNU time; returns peak RSS in KB (-1 on failure).
long Timed(const std::string& cmd) {
  std::string full =
      "/usr/bin/time -f %M -o " + Dir() + "/rss " + cmd + " >/dev/null 2>&1";
  if (std::system(full.c_str()) == -1) return -1;
  std::ifstream in(Dir() + "/rss");
  long kb = -1;
  in >> kb;
  return kb;
}

void BM_LockstepCompare(benchmark::State& state) {
  std::string bin = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
  long kb = 0;
  for (auto _ : state) {
    fs::remove_all(Dir() + "/out");
    kb = Timed(bin + " compare " + Dir() + "/target " + Dir() +
               "/baseline -o " + Dir() + "/out");
    if (kb < 0) state.SkipWithError("compare failed");
  }
  double rows = 2.0 * static_cast<double>(Entries());
  state.counters["peak_rss_MiB"] = static_cast<double>(kb) / 1024;
  state.counters["KB_per_row"] = static_cast<double>(kb) / rows;
}
BENCHMARK(BM_LockstepCompare)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PythonJsonLoad(benchmark::State& state) {
  if (::access("/usr/bin/python3", X_OK) != 0) {
    state.SkipWithError("no /usr/bin/python3");
    return;
  }
  std::string cmd =
      "/usr/bin/python3 -c \"import json,sys; "
      "[json.load(open(p)) for p in sys.argv[1:]]\" " +
      Dir() + "/target/dump.json " + Dir() + "/baseline/dump.json";
  for (auto _ : state) {
    if (std::system(cmd.c_str()) != 0) state.SkipWithError("python failed");
  }
}
BENCHMARK(BM_PythonJsonLoad)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  Generate();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
