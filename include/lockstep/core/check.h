// Internal invariant checks. A failed check is a lockstep bug: it prints the
// condition and location and aborts. LOCKSTEP_CHECK is always on;
// LOCKSTEP_DCHECK only in debug builds (for hot loops).
#ifndef LOCKSTEP_CORE_CHECK_H_
#define LOCKSTEP_CORE_CHECK_H_

namespace lockstep::internal {
[[noreturn]] void CheckFailed(const char* cond, const char* file, int line);
}  // namespace lockstep::internal

#define LOCKSTEP_CHECK(cond) \
  ((cond) ? (void)0          \
          : ::lockstep::internal::CheckFailed(#cond, __FILE__, __LINE__))

#ifdef NDEBUG
#define LOCKSTEP_DCHECK(cond) ((void)0)
#else
#define LOCKSTEP_DCHECK(cond) LOCKSTEP_CHECK(cond)
#endif

#endif  // LOCKSTEP_CORE_CHECK_H_
