// A small tmpfs mounted over a test directory: a real full disk (writes
// fail with ENOSPC) for the tests of what the probe does then.
#ifndef LOCKSTEP_TESTS_TESTING_TMPFS_H_
#define LOCKSTEP_TESTS_TESTING_TMPFS_H_

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace lockstep::testing {

// Mounts a tmpfs of `size` ("256k") over the existing directory `dir`.
// Needs root and a mount namespace that allows it: returns "" when
// mounted, else why not (for GTEST_SKIP).
inline std::string MountTmpfs(const std::string& dir, const std::string& size) {
  if (::geteuid() != 0) return "mounting a tmpfs needs root";
  std::string options = "size=" + size;
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, options.c_str()) != 0) {
    return std::string("cannot mount a tmpfs here: ") + std::strerror(errno);
  }
  return "";
}

inline void UnmountTmpfs(const std::string& dir) {
  ::umount2(dir.c_str(), MNT_DETACH);
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_TMPFS_H_
