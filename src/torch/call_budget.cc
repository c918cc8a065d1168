#include "torch/call_budget.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace lockstep {

struct CallBudgetScope::State {
  explicit State(int64_t l) : limit(l) {}
  const int64_t limit;
  std::atomic<int64_t> held{0};
  std::atomic<int64_t> peak{0};
  std::atomic<int64_t> refused{0};  // 0: nothing refused
};

namespace {

using State = CallBudgetScope::State;

thread_local std::shared_ptr<State> t_scope;

// A block allocated inside a scope: its size and who counts it.
struct Block {
  c10::DeleterFnPtr inner;
  int64_t bytes;
  std::shared_ptr<State> state;
};

// Blocks alive, by address. Leaked: blocks may be freed at exit.
std::mutex& BlocksMu() {
  static auto* mu = new std::mutex();
  return *mu;
}
std::unordered_map<void*, Block>& Blocks() {
  static auto* blocks = new std::unordered_map<void*, Block>();
  return *blocks;
}

c10::DeleterFnPtr g_base_raw_deleter = nullptr;

void TrackedDelete(void* p) {
  std::optional<Block> b;
  {
    std::lock_guard<std::mutex> lock(BlocksMu());
    auto it = Blocks().find(p);
    if (it != Blocks().end()) {
      b = std::move(it->second);
      Blocks().erase(it);
    }
  }
  if (!b) {  // a raw_allocate made outside any scope
    if (g_base_raw_deleter != nullptr) g_base_raw_deleter(p);
    return;
  }
  b->state->held.fetch_sub(b->bytes);
  b->inner(p);
}

// c10::Allocator::allocate is const up to torch 2.2; from 2.3 it is not,
// and copy_data is a pure virtual of its own.
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define LOCKSTEP_ALLOCATE_CONST
#define LOCKSTEP_ALLOCATOR_COPY_DATA 1
#else
#define LOCKSTEP_ALLOCATE_CONST const
#define LOCKSTEP_ALLOCATOR_COPY_DATA 0
#endif

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* base) : base_(base) {}

#if LOCKSTEP_ALLOCATOR_COPY_DATA
  void copy_data(void* dest, const void* src,
                 std::size_t count) const override {
    base_->copy_data(dest, src, count);
  }
#endif

  c10::DataPtr allocate(size_t n) LOCKSTEP_ALLOCATE_CONST override {
    const std::shared_ptr<State>& s = t_scope;
    if (!s || n == 0) return base_->allocate(n);
    Reserve(*s, n);
    c10::DataPtr d;
    try {
      d = base_->allocate(n);
    } catch (...) {
      s->held.fetch_sub(static_cast<int64_t>(n));
      throw;
    }
    void* p = d.get();
    if (p == nullptr || p != d.get_context()) {
      // A block this wrapper cannot follow to its free: not counted.
      s->held.fetch_sub(static_cast<int64_t>(n));
      return d;
    }
    c10::Device device = d.device();
    c10::DeleterFnPtr inner = d.get_deleter();
    d.release_context();
    {
      std::lock_guard<std::mutex> lock(BlocksMu());
      Blocks()[p] = Block{inner, static_cast<int64_t>(n), s};
    }
    return c10::DataPtr(p, p, &TrackedDelete, device);
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return g_base_raw_deleter != nullptr ? &TrackedDelete : nullptr;
  }

 private:
  // Counts `n` bytes against `s`, or throws (before any memory is taken).
  static void Reserve(State& s, size_t n) {
    // limit <= 2^61 (the scope caps it): held + want cannot overflow.
    int64_t want = n > static_cast<size_t>(s.limit) ? s.limit + 1
                                                    : static_cast<int64_t>(n);
    int64_t held = s.held.fetch_add(want) + want;
    if (held > s.limit) {
      s.held.fetch_sub(want);
      int64_t none = 0;
      s.refused.compare_exchange_strong(
          none, static_cast<int64_t>(
                    std::min<size_t>(n, std::numeric_limits<int64_t>::max())));
      TORCH_CHECK(false, "lockstep: an allocation of ", n,
                  " bytes would pass the call's memory budget of ", s.limit,
                  " bytes");
    }
    int64_t peak = s.peak.load();
    while (held > peak && !s.peak.compare_exchange_weak(peak, held)) {
    }
  }

  c10::Allocator* base_;
};

// Puts the counting wrapper in front of the CPU allocator, once: at the
// lowest priority that takes effect (it forwards to whatever was there).
void InstallOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    c10::Allocator* base = c10::GetCPUAllocator();
    g_base_raw_deleter = base->raw_deleter();
    auto* counting = new CountingAllocator(base);  // lives for the process
    for (int priority = 0; priority <= 255; ++priority) {
      c10::SetCPUAllocator(counting, static_cast<uint8_t>(priority));
      if (c10::GetCPUAllocator() == counting) break;
    }
  });
}

}  // namespace

CallBudgetScope::CallBudgetScope(int64_t limit_bytes) {
  InstallOnce();
  if (t_scope) {
    state_ = t_scope;
    return;
  }
  state_ = std::make_shared<State>(
      std::clamp<int64_t>(limit_bytes, 0, int64_t{1} << 61));
  t_scope = state_;
  owner_ = true;
}

CallBudgetScope::~CallBudgetScope() {
  if (owner_) t_scope.reset();
}

bool CallBudgetScope::exceeded() const { return state_->refused.load() != 0; }
int64_t CallBudgetScope::refused_bytes() const {
  return state_->refused.load();
}
int64_t CallBudgetScope::peak_bytes() const { return state_->peak.load(); }
int64_t CallBudgetScope::limit_bytes() const { return state_->limit; }

}  // namespace lockstep
