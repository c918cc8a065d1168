// Statistics compare at LLM scale, as a user runs it: `lockstep compare` of
// two dump.json files of N entries each (one input and one output tensor
// per entry, statistics only), against Python's json.load of the same two
// files, in one run. Two pairs (the benchmark's argument):
//  - 0, "few differ": every entry holds the same values, the baseline's
//    differ by 1e-6 relative (rows pass);
//  - 1, "all differ": as an fp16-vs-fp32 run, every value is its own
//    (pseudo-random, per entry) and the baseline's differ by up to 3%
//    relative, so every row warns or fails and no two rows' cells repeat.
// The dumps are written once under LOCKSTEP_STATS_DIR (default
// /tmp/lockstep_stats); LOCKSTEP_STATS_ENTRIES sets N (default 200000, ~170
// MB a file).
//
//   build/bin/stats_compare_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
//
// Counters: peak_rss_MiB of the compare (testing::RunWithPeakRss),
// KB_per_row, report_MB (report.html and the report files beside it), and
// for the json.load baseline nothing but its time. Ratio to report: compare
// time over json.load time of the same pair (the target is 0.5).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "testing/proc_status.h"

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

std::string PairDir(int pair) {
  return Dir() + (pair == 0 ? "/few_differ" : "/all_differ");
}

// A deterministic value in [0, 1) for (entry, slot, side).
double Unit(uint64_t entry, uint64_t slot, uint64_t side) {
  uint64_t x = entry * 0x9E3779B97F4A7C15ull ^
               (slot + 1) * 0xBF58476D1CE4E5B9ull ^
               (side + 1) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86659FD93ull;
  x ^= x >> 29;
  return static_cast<double>(x >> 11) / 9007199254740992.0;
}

// One tensor's statistics as msprobe writes them: Max, Min, Mean, Norm.
void Tensor(std::ofstream& out, const double v[4]) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\n     \"type\": \"torch.Tensor\",\n     \"dtype\": "
                "\"torch.bfloat16\",\n     \"shape\": [\n      8,\n      "
                "1024\n     ],\n     \"Max\": %.9g,\n     \"Min\": %.9g,\n"
                "     \"Mean\": %.9g,\n     \"Norm\": %.9g,\n     "
                "\"requires_grad\": true\n    }",
                v[0], v[1], v[2], v[3]);
  out << buf;
}

// The statistics of tensor `slot` (0 input, 1 output) of entry i.
void Values(int pair, bool baseline, long i, int slot, double v[4]) {
  const double base[4] = {3.25, -3.125, 0.0123, 90.5};
  for (int k = 0; k < 4; ++k) {
    if (pair == 0) {
      double scale = (baseline ? 1.0 + 1e-6 : 1.0) *
                     (slot == 1 ? 1 + 1e-4 * static_cast<double>(i % 7) : 1.0);
      v[k] = base[k] * scale;
    } else {
      // Each entry's own value; the baseline's off by up to 3%.
      double own =
          base[k] * (0.5 + Unit(static_cast<uint64_t>(i),
                                static_cast<uint64_t>(4 * slot + k), 0));
      double off = baseline
                       ? 0.03 * (Unit(static_cast<uint64_t>(i),
                                      static_cast<uint64_t>(4 * slot + k), 1) -
                                 0.5)
                       : 0.0;
      v[k] = own * (1 + off);
    }
  }
}

void Write(const std::string& path, long n, int pair, bool baseline) {
  std::ofstream out(path);
  out << "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n "
         "\"framework\": \"pytorch\",\n \"dump_data_dir\": null,\n "
         "\"data\": {\n";
  const char* ops[] = {"Functional.linear", "Torch.matmul", "Tensor.add",
                       "Functional.layer_norm", "Functional.gelu"};
  for (long i = 0; i < n; ++i) {
    double v[4];
    out << "  \"" << ops[i % 5] << "." << i / 5 << ".forward\": {\n"
        << "   \"input_args\": [\n    ";
    Values(pair, baseline, i, 0, v);
    Tensor(out, v);
    out << "\n   ],\n   \"input_kwargs\": {},\n   \"output\": [\n    ";
    Values(pair, baseline, i, 1, v);
    Tensor(out, v);
    out << "\n   ]\n  }" << (i + 1 < n ? ",\n" : "\n");
  }
  out << " }\n}\n";
}

void Generate() {
  std::string marker = Dir() + "/pairs2_entries_" + std::to_string(Entries());
  if (fs::exists(marker)) return;
  fs::remove_all(Dir());
  for (int pair : {0, 1}) {
    for (const char* side : {"target", "baseline"}) {
      fs::create_directories(PairDir(pair) + "/" + side);
      Write(PairDir(pair) + "/" + side + "/dump.json", Entries(), pair,
            side[0] == 'b');
    }
  }
  std::ofstream(marker) << "ok\n";
}

// MB of report.html and the report files written beside it.
double ReportMB(const std::string& out) {
  uint64_t bytes = 0;
  for (const auto& f : fs::directory_iterator(out)) {
    std::string name = f.path().filename().string();
    if (name.rfind("report", 0) == 0) bytes += f.file_size();
  }
  return static_cast<double>(bytes) / 1e6;
}

// Runs `cmd`; returns its peak RSS in KB (-1 on failure).
long Timed(const std::string& cmd) {
  long kb = -1;
  lockstep::testing::RunWithPeakRss(cmd + " >/dev/null 2>&1", &kb);
  return kb;
}

void BM_LockstepCompare(benchmark::State& state) {
  std::string bin = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
  std::string dir = PairDir(static_cast<int>(state.range(0)));
  long kb = 0;
  for (auto _ : state) {
    fs::remove_all(dir + "/out");
    kb = Timed(bin + " compare " + dir + "/target " + dir + "/baseline -o " +
               dir + "/out");
    if (kb < 0) state.SkipWithError("compare failed");
  }
  double rows = 2.0 * static_cast<double>(Entries());
  state.counters["peak_rss_MiB"] = static_cast<double>(kb) / 1024;
  state.counters["KB_per_row"] = static_cast<double>(kb) / rows;
  state.counters["report_MB"] = ReportMB(dir + "/out");
}
BENCHMARK(BM_LockstepCompare)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_PythonJsonLoad(benchmark::State& state) {
  if (::access("/usr/bin/python3", X_OK) != 0) {
    state.SkipWithError("no /usr/bin/python3");
    return;
  }
  std::string dir = PairDir(static_cast<int>(state.range(0)));
  std::string cmd =
      "/usr/bin/python3 -c \"import json,sys; "
      "[json.load(open(p)) for p in sys.argv[1:]]\" " +
      dir + "/target/dump.json " + dir + "/baseline/dump.json";
  for (auto _ : state) {
    if (std::system(cmd.c_str()) != 0) state.SkipWithError("python failed");
  }
}
BENCHMARK(BM_PythonJsonLoad)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  Generate();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
