#include "lockstep/compare/tensor_rows.h"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "lockstep/core/file.h"
#include "lockstep/core/parallel.h"
#include "lockstep/core/status.h"
#include "lockstep/format/rank_tensors.h"

namespace lockstep {
namespace {

// Pairs at least this large count as heavy: when there are fewer heavy pairs
// than threads, the threads split each tensor instead of taking a row each.
constexpr size_t kBigTensorBytes = 16u << 20;

// The tensors of the two rank dirs of a pair.
struct PairTensors {
  RankTensors target, baseline;
};

// Whether a tensor file holds the shape its dump.json entry gives (a
// "shape" that is not a list of ints is not checked).
bool ShapeAgrees(const Tensor& t, const OpRow& r) {
  if (r.shape.empty() || r.shape[0] != '[') return true;
  return ShapeToString(t.shape()) == r.shape;
}

// Fills the row and `problem` for a tensor whose file's shape differs from
// its dump.json entry's; false when both agree.
bool FileShapeDiffers(const Tensor& a, const Tensor& b, const std::string& wa,
                      const std::string& wb, MsprobeRow* row,
                      std::string* problem) {
  for (bool npu : {true, false}) {
    const Tensor& t = npu ? a : b;
    const OpRow& r = npu ? *row->npu : *row->bench;
    if (ShapeAgrees(t, r)) continue;
    std::string what = "shape " + Abbreviate(ShapeToString(t.shape())) +
                       ", but dump.json says " + Abbreviate(r.shape);
    SetAllMetrics(row, kUnsupported,
                  std::string(npu ? "NPU" : "Bench") +
                      " data file does not match dump.json: " + what + ".");
    *problem = row->npu->name + ": " + (npu ? wa : wb) + ": " + what;
    return true;
  }
  return false;
}

// Loads and compares one row; a file problem goes to `problem`.
TensorPairFacts CompareOne(const PairTensors& tensors,
                           const CompareOptions& options, int threads,
                           MsprobeRow* row, std::string* problem) {
  TensorPairFacts facts;
  if (row->bench == nullptr) {
    SetAllMetrics(row, kUnsupported, "Bench api/module unmatched.");
    return facts;
  }
  bool npu_has = row->npu->data_name != "-1",
       bench_has = row->bench->data_name != "-1";
  if (options.row_tensor && (!npu_has || !bench_has)) {
    SetAllMetrics(row, kUnsupported,
                  npu_has == bench_has ? "" : "A tensor on one side only.");
    facts.data_missing = npu_has != bench_has;
    return facts;
  }
  if (!npu_has || !bench_has) {
    SetAllMetrics(row, kUnsupported,
                  !npu_has ? "NPU does not have data file."
                           : "Bench does not have data file.");
    facts.data_missing = npu_has != bench_has;
    return facts;
  }
  std::string wa, wb;
  StatusOr<Tensor> a = Status::Internal("unread"), b = a;
  if (options.row_tensor) {
    wa = row->npu->name;
    wb = row->bench->name;
    a = options.row_tensor(true, *row->npu);
    b = a.ok() ? options.row_tensor(false, *row->bench) : a.status();
  } else {
    // A file must lie inside its dump's dump_tensor_data (no "..", no
    // absolute path, no symbolic link, a regular file); a pack entry must
    // be in the pack's checked index.
    a = tensors.target.Read(row->npu->data_name, options.load_tensor, &wa);
    b = !a.ok() ? StatusOr<Tensor>(a.status())
                : tensors.baseline.Read(row->bench->data_name,
                                        options.load_tensor, &wb);
  }
  if (!a.ok() || !b.ok()) {
    const Status& s = !a.ok() ? a.status() : b.status();
    const std::string& file = !a.ok() ? wa : wb;
    SetAllMetrics(row, kUnsupported,
                  "Dump file: " + file + " not found or read failed.");
    // An unreadable pack is one warning for all its rows (CompareTensorRows).
    const RankTensors& side = !a.ok() ? tensors.target : tensors.baseline;
    if (side.pack_status().ok()) *problem = row->npu->name + ": " + s.message();
    row->metric_message += " " + s.message();
    facts.unreadable = true;
    return facts;
  }
  if (FileShapeDiffers(*a, *b, wa, wb, row, problem)) {
    facts.file_mismatch = true;
    return facts;
  }
  facts = CompareTensorPair(*a, *b, threads, row);
  // A mapped file that another process truncated meanwhile read as zeros.
  bool a_changed = MappedFile::RangeFaulted(a->data(), a->nbytes());
  if (a_changed || MappedFile::RangeFaulted(b->data(), b->nbytes())) {
    const std::string& file = a_changed ? wa : wb;
    SetAllMetrics(row, kUnsupported,
                  "Dump file: " + file + " not found or read failed.");
    *problem = row->npu->name + ": " + file +
               ": the file shrank while it was being read";
    row->metric_message += " The file shrank while it was being read.";
    facts = TensorPairFacts();
    facts.unreadable = true;
  }
  return facts;
}

}  // namespace

std::vector<TensorPairFacts> CompareTensorRows(
    const DumpFile& target, const DumpFile& baseline,
    const CompareOptions& options, std::vector<MsprobeRow>* rows,
    std::vector<std::string>* warnings) {
  std::vector<TensorPairFacts> facts(rows->size());
  PairTensors tensors;
  if (!options.row_tensor) {
    tensors = {RankTensors::Open(target.dir), RankTensors::Open(baseline.dir)};
  }
  for (const RankTensors* t : {&tensors.target, &tensors.baseline}) {
    if (!t->pack_status().ok())
      warnings->push_back("tensors not read: " + t->pack_status().message());
  }
  std::mutex mu;
  std::atomic<size_t> done{0};
  int jobs = std::max(1, options.jobs);
  auto run = [&](size_t i, int threads) {
    std::string problem;
    facts[i] = CompareOne(tensors, options, threads, &(*rows)[i], &problem);
    size_t d = ++done;
    std::lock_guard<std::mutex> lock(mu);
    if (!problem.empty()) warnings->push_back(problem);
    if (options.progress) options.progress(d, rows->size());
  };
  // Largest pairs first (longest-processing-time order) so the tail is
  // short; rows run in parallel, each on one thread, unless there are fewer
  // rows than threads, in which case the threads split each tensor.
  std::vector<size_t> order(rows->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto bytes = [&](size_t i) {
    const MsprobeRow& r = (*rows)[i];
    return r.npu->nbytes + (r.bench ? r.bench->nbytes : 0);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bytes(a) > bytes(b); });
  size_t heavy = 0;
  for (size_t i : order)
    heavy += static_cast<size_t>(bytes(i)) >= kBigTensorBytes;
  int inner = heavy > 0 && heavy < static_cast<size_t>(jobs)
                  ? jobs / static_cast<int>(heavy)
                  : 1;
  ParallelFor(order.size(), jobs, [&](size_t k) { run(order[k], inner); });
  return facts;
}

}  // namespace lockstep
