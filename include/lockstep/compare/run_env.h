// Finding the environment fingerprint (env.json, format/env_fingerprint.h)
// of a dump, and the warnings `lockstep compare` prints when two runs'
// fingerprints differ in ways that may change numbers.
// Thread safety: pure functions (they read the filesystem).
#ifndef LOCKSTEP_COMPARE_RUN_ENV_H_
#define LOCKSTEP_COMPARE_RUN_ENV_H_

#include <cstddef>
#include <string>
#include <vector>

namespace lockstep {

// The env.json belonging to the dump at `path` (any path DiscoverDump
// accepts), "" when there is none. Looks, first match wins:
//   1. in `path` itself (its directory when it is a file);
//   2. upwards while the directory is a rank dir (rank*, proc*) or a step
//      dir (step*): the dump root, where the probe writes it;
//   3. in the step and rank dirs DiscoverDump finds under `path`, in order.
std::string FindEnvFingerprint(const std::string& path);

// Warnings for `lockstep compare TARGET BASELINE`: when both dumps have an
// env.json and they differ in a field whose impact is above none
// (compare/env_diff.h), a header line and up to `max_listed` top-ranked
// differences as "  [likely] seed.torch: 7 vs 8" (target's value first; at
// most 2 of one section, so that the seeds do not hide the flags); when
// an env.json cannot be read, one line saying why. Empty when both are
// equal where it matters, or when either dump has no env.json.
std::vector<std::string> RunEnvWarnings(const std::string& target,
                                        const std::string& baseline,
                                        size_t max_listed = 5);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_RUN_ENV_H_
