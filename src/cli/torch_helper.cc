// Reaching lockstep-torch, the executable that holds the commands needing
// LibTorch, from `lockstep` (commands.h).
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "lockstep/core/log.h"

namespace lockstep::cli {
namespace {

constexpr char kHelperName[] = "lockstep-torch";

}  // namespace

std::string ExecutableDir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

bool HaveTorchHelper() {
#ifdef LOCKSTEP_TORCH_HELPER
  return true;
#else
  return false;
#endif
}

int RunTorchHelper(int argc, char** argv) {
  std::string what = argc > 1 && std::strcmp(argv[0], "env") == 0
                         ? std::string("env ") + argv[1]
                         : std::string(argv[0]);
  if (!HaveTorchHelper()) {
    LogError(what +
             " | needs LibTorch, and this lockstep was built without it. "
             "Note: install libtorch-dev and rebuild");
    return kExitUsage;
  }
  std::string helper = ExecutableDir() + "/" + kHelperName;
  std::vector<char*> args;
  args.push_back(const_cast<char*>(kHelperName));
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(helper.c_str(), args.data());
  int err = errno;
  LogError(what + " | cannot run " + helper + ": " + std::strerror(err) +
           ". Note: lockstep-torch holds the commands that need LibTorch; "
           "keep it beside lockstep");
  return kExitUsage;
}

}  // namespace lockstep::cli
