#include "lockstep/core/env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace lockstep {
namespace {

class PosixEnv final : public Env {
 public:
  int Open(const std::string& path, int flags, mode_t mode) override {
    return ::open(path.c_str(), flags, mode);
  }
  ssize_t Write(int fd, const void* data, size_t n) override {
    return ::write(fd, data, n);
  }
  ssize_t PWritev(int fd, const iovec* iov, int count, off_t at) override {
    return ::pwritev(fd, iov, count, at);
  }
  int Truncate(int fd, off_t length) override {
    return ::ftruncate(fd, length);
  }
  int Close(int fd) override { return ::close(fd); }
  int Rename(const std::string& from, const std::string& to) override {
    return std::rename(from.c_str(), to.c_str());
  }
  int Link(const std::string& from, const std::string& to) override {
    return ::link(from.c_str(), to.c_str());
  }
  int Unlink(const std::string& path) override {
    return ::unlink(path.c_str());
  }
  int Mkdir(const std::string& path, mode_t mode) override {
    return ::mkdir(path.c_str(), mode);
  }
};

std::atomic<Env*> g_current_env{nullptr};  // null: Default()

}  // namespace

bool Env::WriteAll(int fd, std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = Write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {  // no progress and no reason: do not spin
      errno = EIO;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();  // never deleted: used at exit too
  return env;
}

Env* Env::Current() {
  Env* env = g_current_env.load(std::memory_order_acquire);
  return env != nullptr ? env : Default();
}

ScopedEnv::ScopedEnv(Env* env)
    : previous_(g_current_env.exchange(env, std::memory_order_acq_rel)) {}

ScopedEnv::~ScopedEnv() {
  g_current_env.store(previous_, std::memory_order_release);
}

}  // namespace lockstep
