// Replay's time limit (private to src/torch/): the entries are replayed in
// a child process that reports each entry as it starts and ends; the parent
// kills it when one entry runs past the limit (an ATen kernel cannot be
// stopped from inside) and starts another child for the entries left. An
// entry whose replay kills its process (a signal, the kernel's OOM killer)
// is named the same way instead of ending the whole replay.
//
// Thread safety: call from one thread at a time per process (fork).
#ifndef LOCKSTEP_SRC_TORCH_REPLAY_WORKER_H_
#define LOCKSTEP_SRC_TORCH_REPLAY_WORKER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/replay_result.h"

namespace lockstep {

// Calls replay(i) for every i in [0, n) in child processes, `jobs` entries
// at once, and stores its checks in (*out)[i] (out is resized to n). An
// entry that ran past `max_seconds` (> 0) of wall time, or whose process
// died, gets instead one kNotReplayable check whose reason says so (entry,
// step and rank left empty for the caller). on_done(i) is called in this
// process as each entry ends. IoError when no child can be started.
Status ReplayEntriesIsolated(
    size_t n, int jobs, double max_seconds,
    const std::function<std::vector<ReplayCheck>(size_t)>& replay,
    const std::function<void(size_t)>& on_done,
    std::vector<std::vector<ReplayCheck>>* out);

// Serialized checks, as the child sends them (exposed for tests).
std::string EncodeReplayChecks(const std::vector<ReplayCheck>& checks);
bool DecodeReplayChecks(std::string_view bytes,
                        std::vector<ReplayCheck>* checks);

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_TORCH_REPLAY_WORKER_H_
