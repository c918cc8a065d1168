#include "lockstep/compare/tensor_rows.h"

#include <atomic>
#include <mutex>

#include "lockstep/core/parallel.h"

namespace lockstep {
namespace {

// Tensors at least this large are compared one at a time with every thread
// working inside the tensor; smaller ones run one per thread.
constexpr size_t kBigTensorBytes = 16u << 20;

std::string DataPath(const DumpFile& dump, const std::string& data_name) {
  return TensorDataDir(dump) + "/" + data_name;
}

// Loads and compares one row; a file problem goes to `problem`.
TensorPairFacts CompareOne(const DumpFile& target, const DumpFile& baseline,
                           const CompareOptions& options, int threads, MsprobeRow* row,
                           std::string* problem) {
  TensorPairFacts facts;
  if (row->bench == nullptr) {
    SetAllMetrics(row, kUnsupported, "Bench api/module unmatched.");
    return facts;
  }
  bool npu_has = row->npu->data_name != "-1", bench_has = row->bench->data_name != "-1";
  if (!npu_has || !bench_has) {
    SetAllMetrics(row, kUnsupported,
                  !npu_has ? "NPU does not have data file." : "Bench does not have data file.");
    facts.data_missing = npu_has != bench_has;
    return facts;
  }
  std::string pa = DataPath(target, row->npu->data_name);
  std::string pb = DataPath(baseline, row->bench->data_name);
  StatusOr<Tensor> a = options.load_tensor(pa);
  StatusOr<Tensor> b = a.ok() ? options.load_tensor(pb) : StatusOr<Tensor>(a.status());
  if (!a.ok() || !b.ok()) {
    const Status& s = !a.ok() ? a.status() : b.status();
    SetAllMetrics(row, kUnsupported,
                  "Dump file: " + (!a.ok() ? pa : pb) + " not found or read failed.");
    *problem = row->npu->name + ": " + s.message();
    facts.unreadable = true;
    return facts;
  }
  return CompareTensorPair(*a, *b, threads, row);
}

}  // namespace

std::vector<TensorPairFacts> CompareTensorRows(const DumpFile& target, const DumpFile& baseline,
                                               const CompareOptions& options,
                                               std::vector<MsprobeRow>* rows,
                                               std::vector<std::string>* warnings) {
  std::vector<TensorPairFacts> facts(rows->size());
  std::mutex mu;
  std::atomic<size_t> done{0};
  int jobs = std::max(1, options.jobs);
  auto run = [&](size_t i, int threads) {
    std::string problem;
    facts[i] = CompareOne(target, baseline, options, threads, &(*rows)[i], &problem);
    size_t d = ++done;
    std::lock_guard<std::mutex> lock(mu);
    if (!problem.empty()) warnings->push_back(problem);
    if (options.progress) options.progress(d, rows->size());
  };
  std::vector<size_t> small, big;
  for (size_t i = 0; i < rows->size(); ++i) {
    const MsprobeRow& r = (*rows)[i];
    int64_t bytes = r.npu->nbytes + (r.bench ? r.bench->nbytes : 0);
    (static_cast<size_t>(bytes) >= kBigTensorBytes ? big : small).push_back(i);
  }
  ParallelFor(small.size(), jobs, [&](size_t k) { run(small[k], 1); });
  for (size_t i : big) run(i, jobs);
  return facts;
}

}  // namespace lockstep
