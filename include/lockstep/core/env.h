// Env: the system calls through which lockstep writes files, behind one
// interface so that tests can make them fail (a full disk, short writes, a
// failed close or rename) without root or a tmpfs, as LevelDB's Env does.
// The file layer (core/file.h) and the other writers call Env::Current();
// a test installs its own Env with a ScopedEnv, usually an EnvWrapper that
// forwards every call to the real one but those it fails.
//
// The calls keep the shape of the POSIX calls they stand for: the same
// arguments and return values, errno set on failure. Paths, descriptors
// and flags are the real ones, so an Env may mix its own calls with the
// real ones freely (a descriptor from Open may be given to ::fstat).
// Thread safety: every Env is safe to call from many threads at once;
// Current() and ScopedEnv are thread-safe (an atomic pointer).
#ifndef LOCKSTEP_CORE_ENV_H_
#define LOCKSTEP_CORE_ENV_H_

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace lockstep {

class Env {
 public:
  Env() = default;
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // The real system calls. Never deleted.
  static Env* Default();
  // The Env that writers use now: Default() unless a ScopedEnv installed
  // another. A writer reads it once per file and uses that Env throughout.
  static Env* Current();

  // open(2). The writers always pass O_CLOEXEC; `mode` as open's.
  virtual int Open(const std::string& path, int flags, mode_t mode) = 0;
  // write(2): may write fewer than `n` bytes (callers loop) and fail with
  // EINTR (callers retry).
  virtual ssize_t Write(int fd, const void* data, size_t n) = 0;
  // pwritev(2), with the same short counts as Write.
  virtual ssize_t PWritev(int fd, const iovec* iov, int count, off_t at) = 0;
  // ftruncate(2).
  virtual int Truncate(int fd, off_t length) = 0;
  // close(2): the descriptor is released even when it fails (EIO: data
  // written earlier may be lost).
  virtual int Close(int fd) = 0;
  // rename(2), link(2), unlink(2), mkdir(2).
  virtual int Rename(const std::string& from, const std::string& to) = 0;
  virtual int Link(const std::string& from, const std::string& to) = 0;
  virtual int Unlink(const std::string& path) = 0;
  virtual int Mkdir(const std::string& path, mode_t mode) = 0;

  // Writes all of `data` to `fd` with Write: resumes short writes, retries
  // EINTR. False on failure, with errno set (EIO for a write that makes no
  // progress and says nothing).
  bool WriteAll(int fd, std::string_view data);
};

// An Env that forwards every call to `target`: a test overrides only the
// calls it fails. Does not own `target`, which must outlive it.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  int Open(const std::string& path, int flags, mode_t mode) override {
    return target_->Open(path, flags, mode);
  }
  ssize_t Write(int fd, const void* data, size_t n) override {
    return target_->Write(fd, data, n);
  }
  ssize_t PWritev(int fd, const iovec* iov, int count, off_t at) override {
    return target_->PWritev(fd, iov, count, at);
  }
  int Truncate(int fd, off_t length) override {
    return target_->Truncate(fd, length);
  }
  int Close(int fd) override { return target_->Close(fd); }
  int Rename(const std::string& from, const std::string& to) override {
    return target_->Rename(from, to);
  }
  int Link(const std::string& from, const std::string& to) override {
    return target_->Link(from, to);
  }
  int Unlink(const std::string& path) override { return target_->Unlink(path); }
  int Mkdir(const std::string& path, mode_t mode) override {
    return target_->Mkdir(path, mode);
  }

 private:
  Env* target_;
};

// Installs `env` as Env::Current() for its lifetime, then puts back the
// one before. Does not own `env`. Scopes nest; they must end in the reverse
// order of their start. Writes already under way on other threads finish
// with the Env they started with, so a test ends its writers (or waits for
// them) before its ScopedEnv ends.
class ScopedEnv {
 public:
  explicit ScopedEnv(Env* env);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  Env* previous_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_ENV_H_
