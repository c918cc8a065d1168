// What `lockstep replay` found: one check per recorded tensor it re-computed
// (an output of a forward call, an input gradient of a backward call), and
// one row per entry it could not replay, with why. Plain data, written by
// report/replay_report.h, produced by torch/replay.h.
#ifndef LOCKSTEP_FORMAT_REPLAY_RESULT_H_
#define LOCKSTEP_FORMAT_REPLAY_RESULT_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace lockstep {

enum class ReplayVerdict {
  kOk,             // within its bound
  kSuspect,        // off by more than its bound
  kNotReplayable,  // the entry could not be rebuilt or run (reason says why)
  kSkipped,        // not an operator call (module, parameter gradients)
};

// "ok", "suspect", "not replayable", "skipped".
const char* ReplayVerdictName(ReplayVerdict v);

struct ReplayCheck {
  int64_t step = -1;  // -1: no step dir
  int64_t rank = 0;
  std::string entry;   // "Functional.conv2d.1.forward"
  std::string tensor;  // "output.0"; backward: "output.1" (the gradient of
                       // the call's tensor input 1); "" for a whole entry
  std::string op;      // "aten::conv2d" ("" when not resolved)
  std::string dtype;   // "torch.float32"
  std::string kind;    // "elementwise", "accumulation", "normalization"
  double max_ulp = 0;  // replay_error.h's measure
  double max_rel = 0;
  // LibTorch CPU's own error in the recorded dtype on the same inputs (NaN
  // when it could not run).
  double cpu_ulp = std::numeric_limits<double>::quiet_NaN();
  double bound = 0;
  std::string bound_rule;    // how `bound` was set
  int64_t worst_index = -1;  // flat element index of max_ulp
  double recorded = 0;       // the recorded value there
  double reference = 0;      // the float64 replay there
  ReplayVerdict verdict = ReplayVerdict::kOk;
  std::string reason;  // suspect: the numbers; not replayable: why
};

struct ReplayResult {
  std::string dump;                     // what was replayed (the dump root)
  std::vector<ReplayCheck> checks;      // steps, ranks ascending; dump order
  std::optional<size_t> first_suspect;  // index into checks
  size_t entries = 0;                   // entries looked at
  size_t replayed = 0;                  // entries replayed (some check ran)
  size_t suspect = 0;                   // checks that are suspect
  size_t not_replayable = 0;            // entries not replayed
  size_t skipped = 0;                   // module and parameter-gradient entries
  std::vector<std::string> warnings;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_REPLAY_RESULT_H_
