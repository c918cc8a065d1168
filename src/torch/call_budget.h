// A memory budget for ATen calls on the CPU (private to src/torch/): while a
// CallBudgetScope is open on a thread, every CPU tensor allocation that
// thread makes is counted, and the one that would take the bytes still held
// past the budget fails (a c10::Error) before it takes any memory. Replay
// and the shadow task run recorded calls inside one (torch/replay_guard.h).
//
// How: the first scope installs a counting wrapper around LibTorch's CPU
// allocator (c10::SetCPUAllocator, once per process). Outside a scope the
// wrapper passes every request straight through (one thread-local read);
// inside, it records each block's size until the block is freed, whenever
// that is. Allocations made on other threads (LibTorch's intra-op workers,
// rarely used for buffers) and memory a kernel takes from malloc directly
// are not counted: the estimate made before the call (replay_guard.cc)
// covers outputs, the scope what the kernels take through ATen.
//
// Thread safety: scopes are per thread; any number of threads may hold one.
#ifndef LOCKSTEP_SRC_TORCH_CALL_BUDGET_H_
#define LOCKSTEP_SRC_TORCH_CALL_BUDGET_H_

#include <cstdint>
#include <memory>

namespace lockstep {

class CallBudgetScope {
 public:
  // Opens a scope of `limit_bytes` (> 0) on this thread. Where one is open
  // already, this one only watches it (nested scopes share the outer
  // budget).
  explicit CallBudgetScope(int64_t limit_bytes);
  ~CallBudgetScope();
  CallBudgetScope(const CallBudgetScope&) = delete;
  CallBudgetScope& operator=(const CallBudgetScope&) = delete;

  // Whether an allocation failed for the budget in this scope, and the
  // size of the first that did.
  bool exceeded() const;
  int64_t refused_bytes() const;
  // The largest number of bytes held at once in this scope.
  int64_t peak_bytes() const;
  int64_t limit_bytes() const;

  struct State;  // shared with the blocks allocated in the scope

 private:
  std::shared_ptr<State> state_;
  bool owner_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_TORCH_CALL_BUDGET_H_
