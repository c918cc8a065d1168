// lockstep replay: re-runs every operator call of a tensor-mode dump on the
// CPU in float64 and says which recorded results are wrong for their own
// inputs, with no baseline run (docs/replay.md).
//
// Per forward entry: the call is rebuilt from dump.json (the operator from
// the entry's "aten" key, which lockstep's probe writes in tensor mode, or
// from msprobe's API name; the tensor arguments from their files; the other
// arguments as recorded) and run three times on the CPU: in float64 (the
// reference), in float64 on |inputs| (the scale of sums of products), and in
// the recorded dtype (LibTorch CPU's own error, for comparison; fp16 ops
// that LibTorch 1.13 cannot run on the CPU are computed in fp32 and rounded
// to fp16). Each recorded output is measured against the reference
// (numerics/replay_error.h) and checked against its bound: the operator
// table's (torch/replay_ops.cc) or 2x LibTorch CPU's own error, whichever is
// larger.
//
// Per backward entry: the forward call rebuilt with its floating inputs as
// leaves, the recorded output gradients pushed through autograd in float64,
// and the recorded input gradients measured the same way.
//
// A shadow-task dump (the probe's task shadow, which replayed sampled
// forward calls as they ran and saved no tensors) is read, not replayed:
// each entry's "shadow" records become its checks; entries not sampled and
// backward entries are skipped.
//
// Entries that cannot be replayed (random operators, collectives, Python
// indexing, unknown operators, arguments that fit no overload, statistics
// dumps, missing tensor files) are listed with why; module and parameter-
// gradient entries are skipped (they are not operator calls).
//
// A dump.json may come from anyone and can name any operator: only an
// allowlist of pure tensor operators runs (no file, random, raw-view,
// storage or distributed operator), every tensor's sizes and strides are
// checked against its storage, each call's memory is estimated before it
// runs and counted while it runs against a budget, and each entry's time
// is bounded (docs/replay.md#allowlist, #limits). A call refused is listed
// as not replayable with why.
//
// Thread safety: ReplayDump may run concurrently with itself; it uses
// `jobs` threads and LibTorch.
#ifndef LOCKSTEP_TORCH_REPLAY_H_
#define LOCKSTEP_TORCH_REPLAY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/replay_result.h"

namespace lockstep {

struct ReplayOptions {
  std::string dump;            // dump root, step dir or rank dir
  std::vector<int64_t> steps;  // empty: every step
  std::vector<int64_t> ranks;  // empty: every rank
  bool backward = true;        // replay backward entries too
  int jobs = 1;                // entries replayed at once
  // Bytes one replayed call may hold at once; 0: 16 x the bytes of its
  // tensors in float64, at least 64 MiB (docs/replay.md#limits).
  int64_t max_call_memory = 0;
  // Wall-clock seconds one entry's replay may take; the entries then run in
  // a child process (fork) that is stopped past it, and an entry that kills
  // its process is named. 0: no limit, the entries run in this process
  // (where a fork is unwelcome: other threads of this process holding
  // LibTorch's locks would hold them forever in the child).
  double max_call_seconds = 60;
  // Called with (entries done, entries in all) as the replay goes.
  std::function<void(size_t, size_t)> progress;
};

// NotFound / Corruption when the dump cannot be read at all (no dump.json
// found, an unreadable dump.json); per-entry problems become checks with
// verdict kNotReplayable instead.
StatusOr<ReplayResult> ReplayDump(const ReplayOptions& options);

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_REPLAY_H_
