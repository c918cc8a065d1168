// Runs the built `lockstep` binary as a user would (for CLI tests): the
// exit code and everything it printed on stdout and stderr.
#ifndef LOCKSTEP_TESTS_TESTING_RUN_LOCKSTEP_H_
#define LOCKSTEP_TESTS_TESTING_RUN_LOCKSTEP_H_

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace lockstep::testing {

struct CmdRun {
  int code = -1;    // exit code; -1 when it did not exit normally
  std::string out;  // stdout and stderr
};

// Runs `command` through the shell, stderr merged into stdout.
inline CmdRun RunCommand(const std::string& command) {
  CmdRun r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
    r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs build/bin/<binary> with `args` appended, through the shell.
// REQUIRES: LOCKSTEP_BIN_DIR is defined (it is, for every test).
inline CmdRun RunBinary(const std::string& binary, const std::string& args) {
  return RunCommand(std::string(LOCKSTEP_BIN_DIR) + "/" + binary + " " + args);
}

// `args` are appended to the lockstep binary's path.
inline CmdRun RunLockstep(const std::string& args) {
  return RunBinary("lockstep", args);
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_RUN_LOCKSTEP_H_
