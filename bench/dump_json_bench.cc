// Reading and writing msprobe's dump.json: the quick_start fixture (695 KB,
// 760 entries). Fixtures are found in the checkout (tests/fixtures),
// or at $LOCKSTEP_FIXTURES_DIR. The streamed cases split what a statistics
// compare spends reading a dump: the parse and each entry's tree alone
// (entries dropped), then with the entries flattened into compare rows.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "lockstep/compare/op_rows.h"
#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/dump_writer.h"

namespace {

std::string QuickStartDump() {
  const char* env = std::getenv("LOCKSTEP_FIXTURES_DIR");
  std::filesystem::path fixtures =
      env ? std::filesystem::path(env)
          : std::filesystem::path(__FILE__).parent_path().parent_path() /
                "tests" / "fixtures";
  return (fixtures / "msprobe/quick_start/step0/proc2016/dump.json").string();
}

void BM_ReadDumpJson(benchmark::State& state) {
  std::string path = QuickStartDump();
  for (auto _ : state) {
    auto d = lockstep::ReadDumpJson(path);
    if (!d.ok()) {
      state.SkipWithError(d.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(d->entries.size());
  }
  state.SetBytesProcessed(state.iterations() * 695347);
}
BENCHMARK(BM_ReadDumpJson)->Unit(benchmark::kMillisecond);

void BM_EncodeDumpJson(benchmark::State& state) {
  auto d = lockstep::ReadDumpJson(QuickStartDump());
  if (!d.ok()) {
    state.SkipWithError(d.status().ToString().c_str());
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = lockstep::EncodeDumpJson(*d);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_EncodeDumpJson)->Unit(benchmark::kMillisecond);

void BM_StreamEntriesDropped(benchmark::State& state) {
  std::string path = QuickStartDump();
  for (auto _ : state) {
    size_t n = 0;
    auto d = lockstep::ReadDumpJsonStreaming(path,
                                             [&n](lockstep::DumpEntry, size_t) {
                                               ++n;
                                               return lockstep::Status::Ok();
                                             });
    if (!d.ok()) {
      state.SkipWithError(d.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(state.iterations() * 695347);
}
BENCHMARK(BM_StreamEntriesDropped)->Unit(benchmark::kMillisecond);

void BM_ReadFlatDump(benchmark::State& state) {
  std::string path = QuickStartDump();
  for (auto _ : state) {
    auto d = lockstep::ReadFlatDump(path);
    if (!d.ok()) {
      state.SkipWithError(d.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(d->rows.size());
  }
  state.SetBytesProcessed(state.iterations() * 695347);
}
BENCHMARK(BM_ReadFlatDump)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
