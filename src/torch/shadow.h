// The probe's shadow task (private to src/torch/): a forward call replayed
// in float64 on the CPU as it runs, and its outputs' errors kept in the
// entry's "shadow" list of dump.json, which `lockstep replay` reads back
// (docs/probe.md#shadow).
//
// A "shadow" record, one per checked output:
//   {"tensor": "output.0", "dtype": "torch.float32", "max_ulp": 0.5,
//    "max_rel": 3e-8, "cpu_ulp": 0.5, "bound": 1, "bound_rule": "...",
//    "kind": "rounded", "index": 3, "recorded": 0.25, "reference": 0.25,
//    "verdict": "ok", "reason": ""}
// and for a call that could not be checked only
//   {"verdict": "not replayable", "reason": "random operator: ..."}.
// msprobe and `lockstep compare` ignore the key.
//
// Thread safety: ShadowCheck may run on any number of threads at once; the
// record functions are pure.
#ifndef LOCKSTEP_SRC_TORCH_SHADOW_H_
#define LOCKSTEP_SRC_TORCH_SHADOW_H_

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>

#include <optional>
#include <vector>

#include "lockstep/format/py_json_builder.h"
#include "lockstep/format/pyvalue.h"
#include "lockstep/format/replay_result.h"

namespace lockstep {

// The operator of a RecordFunction call, or nullopt when it has no schema
// (a Python-level or profiler scope).
std::optional<c10::OperatorHandle> ShadowOperator(const at::RecordFunction& fn);

// The call's inputs as RecordFunction boxed them, kept until its end: those
// the operator writes (Tensor(a!) in `op`'s schema; without a schema, every
// tensor of a call whose name ends in '_') are copied, the rest shared.
std::vector<c10::IValue> HoldInputs(const at::RecordFunction& fn,
                                    const c10::OperatorHandle* op);

// Replays `op` on `inputs` (schema order; HoldInputs's) in float64 on the
// CPU and measures `outputs` (the call's real results) against it with
// lockstep replay's bounds (replay_internal.h CheckForward). Never throws:
// a call that cannot be checked (no schema, a random operator, LibTorch
// refusing the replayed call) gives one check with verdict kNotReplayable
// and why. The replay runs no RecordFunction callbacks, records no
// autograd, and ignores the thread's dispatch modes (autocast, test
// kernels, Python modes): it computes what the operator should have.
std::vector<ReplayCheck> ShadowCheck(const c10::OperatorHandle* op,
                                     const std::vector<c10::IValue>& inputs,
                                     const std::vector<c10::IValue>& outputs);

// Writes `checks` as the value of the entry's "shadow" key (a list of the
// records above) into `b`, where a value is due.
void WriteShadowList(const std::vector<ReplayCheck>& checks, PyJsonBuilder* b);

// The checks of a "shadow" list (`list`), each `base` (entry, step, rank,
// op) with the record's fields; a record that is not a dict or names no
// known verdict becomes a kNotReplayable check saying so.
std::vector<ReplayCheck> ReadShadowList(const PyValue& list,
                                        const ReplayCheck& base);

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_TORCH_SHADOW_H_
