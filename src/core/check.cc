#include "lockstep/core/check.h"

#include <cstdio>
#include <cstdlib>

namespace lockstep::internal {

void CheckFailed(const char* cond, const char* file, int line) {
  std::fprintf(stderr,
               "[E] lockstep internal error: check '%s' failed at %s:%d\n",
               cond, file, line);
  std::abort();
}

}  // namespace lockstep::internal
