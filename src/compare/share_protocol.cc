// CompareDumpRowsShared: the three collective steps of a shared compare
// (agree on the plan, agree on the columns, gather the shares).
#include <cstring>

#include "lockstep/compare/compare_share.h"
#include "lockstep/core/progress.h"
#include "lockstep/format/crc32.h"

namespace lockstep {
namespace share_protocol {  // named: the layer builds as a unity build
namespace {

// What a process found, as bytes: "1" and a digest of the pairs, or "0" and
// the error. The digest (the pairs' steps and dump.json paths, CRC-32 and
// length) tells processes that see different dumps apart.
std::string PlanMessage(const StatusOr<ComparePlan>& plan) {
  if (!plan.ok()) return "0" + EncodeStatus(plan.status());
  std::string all;
  for (const RankPair& p : plan->pairing.pairs) {
    all += std::to_string(p.target_step) + " " +
           std::to_string(p.baseline_step) + " " + p.target.dump_json + " " +
           p.baseline.dump_json + "\n";
  }
  all += std::to_string(plan->pairing.baseline_only_ranks.size()) + " " +
         std::to_string(plan->pairing.target_only_ranks.size());
  return "1" + std::to_string(Crc32(all)) + ":" + std::to_string(all.size()) +
         ":" + std::to_string(plan->pairing.pairs.size());
}

// Every process's plan agreed: Ok, or the first process's error.
Status AgreePlans(const std::vector<std::string>& all) {
  for (const std::string& m : all) {
    if (!m.empty() && m[0] == '0') return DecodeStatus(m.substr(1));
  }
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i] != all[0]) {
      return Status::InvalidArgument(
          "process " + std::to_string(i),
          "finds other (step, rank) pairs than process 0 (another "
          "filesystem?). Note: every process must see every rank dir "
          "(a shared filesystem, or the same paths on every node)");
    }
  }
  return Status::Ok();
}

// A share's header choice: the pair that chose, whether choosing failed,
// the mode and the stack column, as 11 bytes.
std::string HeaderMessage(const PartialResult& p) {
  bool failed = p.header_pair >= 0 && !p.pairs.empty() &&
                p.pairs.back().pair == static_cast<size_t>(p.header_pair) &&
                p.pairs.back().kind == PairOutcome::Kind::kFailed;
  std::string m(11, '\0');
  std::memcpy(m.data(), &p.header_pair, 8);
  m[8] = failed;
  m[9] = static_cast<char>(p.mode);
  m[10] = p.with_stack;
  return m;
}

struct Header {
  int64_t pair = -1;
  bool failed = false;
  CompareColumns columns;
};

Header ReadHeader(const std::string& m) {
  Header h;
  std::memcpy(&h.pair, m.data(), 8);
  h.failed = m[8] != 0;
  h.columns.mode = static_cast<CompareMode>(m[9]);
  h.columns.with_stack = m[10] != 0;
  return h;
}

// The columns this process must compare with again (the first readable
// pair of all chose others than its own), or nullopt.
std::optional<CompareColumns> Redo(const std::vector<std::string>& all,
                                   int me) {
  Header first, mine = ReadHeader(all[me]);
  for (const std::string& m : all) {
    Header h = ReadHeader(m);
    if (h.pair >= 0 && (first.pair < 0 || h.pair < first.pair)) first = h;
  }
  if (first.failed || mine.pair < 0 || mine.pair == first.pair)
    return std::nullopt;
  if (!mine.failed && mine.columns.mode == first.columns.mode &&
      mine.columns.with_stack == first.columns.with_stack)
    return std::nullopt;
  return first.columns;
}

}  // namespace
}  // namespace share_protocol

StatusOr<CompareResult> CompareDumpRowsShared(const std::string& target,
                                              const std::string& baseline,
                                              const CompareOptions& options,
                                              ShareGroup* group) {
  namespace sp = share_protocol;
  const int me = group->index();
  StatusOr<ComparePlan> plan = PlanCompare(target, baseline, options);
  LOCKSTEP_RETURN_IF_ERROR(
      sp::AgreePlans(group->AllGather(sp::PlanMessage(plan))));
  std::vector<int> owners = ShareOwners(*plan, group->size());
  PartialResult part = CompareShare(*plan, owners, me, options, std::nullopt);
  // Mixed dumps (the first ranks with stack.json, the others without; md5
  // on some ranks only) choose other columns in other shares: those shares
  // are compared again with the columns of the first pair of all.
  std::optional<CompareColumns> redo =
      sp::Redo(group->AllGather(sp::HeaderMessage(part)), me);
  if (redo) part = CompareShare(*plan, owners, me, options, redo);
  TimingMark("compare: own share");
  // Process 0 keeps its own share as it is (not encoded).
  std::vector<std::string> blobs =
      group->Gather(me == 0 ? std::string() : EncodePartial(part));
  if (me != 0) return CompareResult();
  std::vector<PartialResult> shares;
  shares.push_back(std::move(part));
  for (size_t i = 1; i < blobs.size(); ++i) {
    LOCKSTEP_ASSIGN_OR_RETURN(
        shares.emplace_back(),
        DecodePartial(blobs[i],
                      "partial result of process " + std::to_string(i)));
    std::string().swap(blobs[i]);
  }
  TimingMark("compare: shares gathered and decoded");
  return AssembleShares(*plan, std::move(shares));
}

}  // namespace lockstep
