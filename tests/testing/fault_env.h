// FaultEnv: an Env (core/env.h) that fails the file layer's system calls
// the way a failing disk does, for tests that need no root and no tmpfs:
// a disk that fills (writes fail with ENOSPC), short writes, and chosen
// calls (close, rename, link, ...) failing with a chosen errno. Install it
// with ScopedEnv.
// Thread safety: thread-safe (one mutex around every call).
#ifndef LOCKSTEP_TESTS_TESTING_FAULT_ENV_H_
#define LOCKSTEP_TESTS_TESTING_FAULT_ENV_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "lockstep/core/env.h"

namespace lockstep::testing {

class FaultEnv : public EnvWrapper {
 public:
  static constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();
  enum Op { kOpen, kWrite, kClose, kRename, kLink, kUnlink, kMkdir, kOps };

  FaultEnv() : EnvWrapper(Env::Default()) {}

  // The disk has `bytes` free from now on. A write that does not fit
  // writes what fits (a short count), the next one fails with ENOSPC.
  // Removing or cutting back a file written through this Env gives its
  // bytes back (unlink of its last name, rename over it, ftruncate), as a
  // real disk does; files written otherwise are not counted.
  void SetFreeBytes(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    free_ = bytes;
  }
  // Files take whole blocks of `bytes` (1 by default: exact sizes; 4096 as
  // tmpfs and most file systems). Set it before writing.
  void SetBlockBytes(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    block_ = std::max<uint64_t>(bytes, 1);
  }
  uint64_t free_bytes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return free_;
  }
  // Every write and pwritev writes at most `n` bytes (0: no limit).
  void SetMaxWriteBytes(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    max_write_ = n;
  }
  // Every call of `op` fails with `err` from now on (0: none fails). A
  // failing Close still closes; it fails only for descriptors opened for
  // writing. A failing Rename, Link, Unlink or Mkdir changes nothing.
  void Fail(Op op, int err) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_[op] = err;
  }
  // How many calls of `op` failed by Fail or a full disk; how many writes
  // were cut short.
  int failures(Op op) const {
    std::lock_guard<std::mutex> lock(mu_);
    return failures_[op];
  }
  int short_writes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return short_writes_;
  }

  int Open(const std::string& path, int flags, mode_t mode) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Failed(kOpen)) return -1;
    int fd = target()->Open(path, flags, mode);
    if (fd >= 0 && (flags & O_ACCMODE) != O_RDONLY) writable_.insert(fd);
    return fd;
  }
  ssize_t Write(int fd, const void* data, size_t n) override {
    std::lock_guard<std::mutex> lock(mu_);
    off_t at = ::lseek(fd, 0, SEEK_CUR);
    File f = Look(fd);
    size_t fit = Fit(f, at, n);
    if (fit == 0 && n > 0) return -1;
    ssize_t w = target()->Write(fd, data, fit);
    if (w > 0) Grew(f, at + w);
    return w;
  }
  ssize_t PWritev(int fd, const iovec* iov, int count, off_t at) override {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (int i = 0; i < count; ++i) n += iov[i].iov_len;
    File f = Look(fd);
    size_t fit = Fit(f, at, n);
    if (fit == 0 && n > 0) return -1;
    std::vector<iovec> cut;  // the first `fit` bytes of `iov`
    for (int i = 0; i < count && fit > 0; ++i) {
      cut.push_back(iov[i]);
      cut.back().iov_len = std::min(fit, iov[i].iov_len);
      fit -= cut.back().iov_len;
    }
    ssize_t w =
        target()->PWritev(fd, cut.data(), static_cast<int>(cut.size()), at);
    if (w > 0) Grew(f, at + w);
    return w;
  }
  int Truncate(int fd, off_t length) override {
    std::lock_guard<std::mutex> lock(mu_);
    File f = Look(fd);
    int rc = target()->Truncate(fd, length);
    auto it = f.known ? held_.find(f.key) : held_.end();
    if (rc == 0 && it != held_.end() &&
        it->second > static_cast<uint64_t>(length)) {
      Refund(Blocks(it->second) - Blocks(length));
      it->second = length;
    }
    return rc;
  }
  int Close(int fd) override {
    std::lock_guard<std::mutex> lock(mu_);
    bool writable = writable_.erase(fd) > 0;
    int rc = target()->Close(fd);
    if (rc == 0 && writable && Failed(kClose)) return -1;
    return rc;
  }
  int Rename(const std::string& from, const std::string& to) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Failed(kRename)) return -1;
    struct stat old_to, st;
    bool replaces =
        ::lstat(to.c_str(), &old_to) == 0 &&
        !(::lstat(from.c_str(), &st) == 0 && Key(st) == Key(old_to));
    int rc = target()->Rename(from, to);
    if (rc == 0 && replaces) Forget(old_to);
    return rc;
  }
  int Link(const std::string& from, const std::string& to) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Failed(kLink)) return -1;
    return target()->Link(from, to);
  }
  int Unlink(const std::string& path) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Failed(kUnlink)) return -1;
    struct stat st;
    bool known = ::lstat(path.c_str(), &st) == 0;
    int rc = target()->Unlink(path);
    if (rc == 0 && known) Forget(st);
    return rc;
  }
  int Mkdir(const std::string& path, mode_t mode) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (Failed(kMkdir)) return -1;
    return target()->Mkdir(path, mode);
  }

 private:
  using InodeKey = std::pair<dev_t, ino_t>;
  static InodeKey Key(const struct stat& st) { return {st.st_dev, st.st_ino}; }

  // Whether `op` is set to fail (sets errno and counts it).
  bool Failed(Op op) {
    if (fail_[op] == 0) return false;
    ++failures_[op];
    errno = fail_[op];
    return true;
  }
  struct File {
    bool known = false;  // fstat worked
    InodeKey key;
    uint64_t size = 0;  // before the write
  };
  static File Look(int fd) {
    File f;
    struct stat st;
    if (::fstat(fd, &st) != 0) return f;
    f.known = true;
    f.key = Key(st);
    f.size = static_cast<uint64_t>(st.st_size);
    return f;
  }
  // How many of `n` bytes written at `at` in `f` go through: the short
  // write limit, then the free space. 0 with errno set when none does.
  size_t Fit(const File& f, off_t at, size_t n) {
    if (Failed(kWrite)) return 0;
    if (max_write_ > 0 && n > max_write_) {
      n = max_write_;
      ++short_writes_;
    }
    if (free_ == kUnlimited || at < 0 || !f.known) return n;
    // The file may grow to the end of its last block and the free ones.
    uint64_t limit = Blocks(f.size) + free_ / block_ * block_;
    uint64_t room = limit > static_cast<uint64_t>(at) ? limit - at : 0;
    if (n <= room) return n;
    if (room == 0) {
      ++failures_[kWrite];
      errno = ENOSPC;
    }
    return static_cast<size_t>(room);
  }
  // Counts the bytes by which `f` grew, to `end`.
  void Grew(const File& f, off_t end) {
    if (!f.known || static_cast<uint64_t>(end) <= f.size) return;
    uint64_t& held = held_[f.key];
    uint64_t base = std::max(held, f.size);
    uint64_t top = std::max<uint64_t>(base, end);
    uint64_t added = Blocks(top) - Blocks(base);
    held = top;
    if (free_ != kUnlimited) free_ -= std::min(free_, added);
  }
  // A name of `st` (as it was before) is gone: its bytes come back if that
  // was its last name.
  void Forget(const struct stat& st) {
    if (!S_ISREG(st.st_mode) || st.st_nlink > 1) return;
    auto it = held_.find(Key(st));
    if (it == held_.end()) return;
    Refund(Blocks(it->second));
    held_.erase(it);
  }
  // The bytes that a file of `size` bytes takes on the disk.
  uint64_t Blocks(uint64_t size) const {
    return (size + block_ - 1) / block_ * block_;
  }
  void Refund(uint64_t bytes) {
    if (free_ != kUnlimited) free_ += bytes;
  }

  mutable std::mutex mu_;
  uint64_t free_ = kUnlimited;
  uint64_t block_ = 1;
  size_t max_write_ = 0;
  int fail_[kOps] = {};
  int failures_[kOps] = {};
  int short_writes_ = 0;
  std::set<int> writable_;             // descriptors open for writing
  std::map<InodeKey, uint64_t> held_;  // size of each file written
};

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_FAULT_ENV_H_
