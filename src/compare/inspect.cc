#include "lockstep/compare/inspect.h"

#include <filesystem>

#include "lockstep/compare/op_rows.h"
#include "lockstep/format/discovery.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/rank_tensors.h"

namespace lockstep {
namespace {

bool EndsWith(const std::string& s, const std::string& x) {
  return s.size() >= x.size() &&
         s.compare(s.size() - x.size(), x.size(), x) == 0;
}

void CountFiles(const std::string& dir, RankSummary* r) {
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator(dir + "/dump_tensor_data", ec)) {
    if (!e.is_regular_file(ec)) continue;
    ++r->tensor_files;
    r->tensor_file_bytes += static_cast<int64_t>(e.file_size(ec));
  }
}

void CountPacked(const std::string& dir, RankSummary* r) {
  r->packed = true;
  RankTensors t = RankTensors::Open(dir);
  if (t.pack() == nullptr) {
    r->pack_error = t.pack_status().message();
    return;
  }
  for (const PackEntry& e : t.pack()->entries()) {
    ++r->tensor_files;
    r->tensor_file_bytes += static_cast<int64_t>(e.size);
  }
}

void Summarize(const DumpFile& d, RankSummary* r) {
  r->task = d.task;
  r->level = d.level;
  r->framework = d.framework;
  r->entries = static_cast<int64_t>(d.entries.size());
  for (const auto& e : d.entries) {
    if (EndsWith(e.name, ".forward") ||
        e.name.find(".forward.") != std::string::npos) {
      ++r->forward_entries;
    } else if (EndsWith(e.name, ".backward") ||
               e.name.find(".backward.") != std::string::npos) {
      ++r->backward_entries;
    } else if (e.name.find(".parameters_grad") != std::string::npos) {
      ++r->parameters_grad_entries;
    } else {
      ++r->other_entries;
    }
  }
  for (const OpRow& row : FlattenDump(d)) {
    ++r->rows;
    if (!row.is_tensor) continue;
    ++r->tensors;
    r->tensor_bytes += row.nbytes;
    r->dtypes[row.dtype]++;
  }
}

}  // namespace

StatusOr<DumpSummary> InspectDump(const std::string& path) {
  LOCKSTEP_ASSIGN_OR_RETURN(DumpLayout layout, DiscoverDump(path));
  DumpSummary out;
  out.root = layout.root;
  out.warnings = layout.warnings;
  for (const StepLayout& step : layout.steps) {
    for (const RankLayout& rank : step.ranks) {
      RankSummary r;
      r.step = step.step;
      r.rank = rank.rank;
      r.dir = rank.dir;
      r.has_stack = rank.has_stack_json;
      r.has_construct = rank.has_construct_json;
      StatusOr<DumpFile> d = ReadDumpJson(rank.dump_json);
      if (d.ok()) {
        Summarize(*d, &r);
      } else {
        r.error = d.status().message();
      }
      if (rank.has_tensor_data) {
        CountFiles(rank.dir, &r);
      } else if (RankUsesPack(rank.dir)) {
        CountPacked(rank.dir, &r);
      }
      out.ranks.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace lockstep
