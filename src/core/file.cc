#include "lockstep/core/file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <system_error>

#include "lockstep/core/env.h"

namespace lockstep {
namespace {

Status ErrnoStatus(const std::string& path, const char* what) {
  int err = errno;
  std::string problem = std::string(what) + ": " + std::strerror(err);
  if (err == ENOENT) return Status::NotFound(path, problem);
  return Status::IoError(path, problem);
}

// Reads all of `fd` into `out`.
Status ReadAll(int fd, const std::string& path, std::string* out) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(path, "read failed");
    }
    if (n == 0) return Status::Ok();
    out->append(buf, static_cast<size_t>(n));
  }
}

// The SIGBUS registry: one slot per live mapping. The handler only reads
// atomics and makes system calls (mmap, sigaction), so it is safe in a
// signal handler on Linux.
struct MapSlot {
  std::atomic<uintptr_t> begin{0};  // 0: free
  std::atomic<uintptr_t> end{0};
  std::atomic<bool> faulted{false};
};
constexpr int kMapSlots = 4096;
MapSlot g_map_slots[kMapSlots];
std::atomic<int> g_slot_hint{0};
uintptr_t g_page_size = 4096;
struct sigaction g_previous_sigbus;
std::once_flag g_sigbus_once;
std::atomic<bool> g_any_map_faulted{false};

void OnSigbus(int sig, siginfo_t* info, void* context) {
  // si_addr means something only for a fault (si_code > 0), not for a
  // signal sent by kill or raise.
  uintptr_t addr =
      info->si_code > 0 ? reinterpret_cast<uintptr_t>(info->si_addr) : 0;
  for (MapSlot& slot : g_map_slots) {
    if (addr == 0) break;
    uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    // 0: free; 1: claimed, not yet published (its end may already be set).
    if (begin <= 1 || addr < begin) continue;
    uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (addr >= end) continue;
    // Every page from the fault on lies past the file's new end: read zeros.
    uintptr_t page = addr & ~(g_page_size - 1);
    void* p = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) break;
    slot.faulted.store(true, std::memory_order_release);
    g_any_map_faulted.store(true, std::memory_order_release);
    return;
  }
  // Not one of ours: hand it to whoever handled SIGBUS before us.
  const struct sigaction& prev = g_previous_sigbus;
  if ((prev.sa_flags & SA_SIGINFO) != 0 && prev.sa_sigaction != nullptr) {
    prev.sa_sigaction(sig, info, context);
    return;
  }
  if ((prev.sa_flags & SA_SIGINFO) == 0 && prev.sa_handler != SIG_DFL &&
      prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
    return;
  }
  // Default action: restore it and raise again (delivered on return).
  ::sigaction(SIGBUS, &prev, nullptr);
  ::raise(sig);
}

void InstallSigbusHandler() {
  std::call_once(g_sigbus_once, [] {
    long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page_size = static_cast<uintptr_t>(page);
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_sigaction = OnSigbus;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
}

// Registers [p, p + n); returns its slot, or -1 when every slot is taken.
int RegisterMap(const void* p, size_t n) {
  InstallSigbusHandler();
  int start = g_slot_hint.load(std::memory_order_relaxed);
  for (int k = 0; k < kMapSlots; ++k) {
    int i = (start + k) % kMapSlots;
    MapSlot& slot = g_map_slots[i];
    uintptr_t expected = 0;
    // Claim with a marker no address has, then publish end before begin.
    if (!slot.begin.compare_exchange_strong(expected, 1,
                                            std::memory_order_acq_rel))
      continue;
    slot.faulted.store(false, std::memory_order_relaxed);
    slot.end.store(reinterpret_cast<uintptr_t>(p) + n,
                   std::memory_order_release);
    slot.begin.store(reinterpret_cast<uintptr_t>(p), std::memory_order_release);
    g_slot_hint.store((i + 1) % kMapSlots, std::memory_order_relaxed);
    return i;
  }
  return -1;
}

void UnregisterMap(int i) {
  MapSlot& slot = g_map_slots[i];
  slot.end.store(0, std::memory_order_release);
  slot.begin.store(0, std::memory_order_release);
}

}  // namespace

StatusOr<std::shared_ptr<const MappedFile>> MappedFile::Open(
    const std::string& path, bool populate, bool regular_only) {
  int fd =
      ::open(path.c_str(), O_RDONLY | O_CLOEXEC |
                               (regular_only ? O_NOFOLLOW | O_NONBLOCK : 0));
  if (fd < 0 && regular_only && errno == ELOOP)
    return Status::InvalidArgument(path, "refused: a symbolic link");
  if (fd < 0) return ErrnoStatus(path, "cannot open");
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = ErrnoStatus(path, "cannot stat");
    ::close(fd);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path, "is a directory, expected a file");
  }
  if (regular_only && !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path, "refused: not a regular file");
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    // Pre-faulting the whole map in one call is several times cheaper than
    // taking a page fault per 4 KiB while reading (files from the page cache).
    int flags =
        MAP_PRIVATE | (populate && st.st_size >= (1 << 20) ? MAP_POPULATE : 0);
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, flags,
                     fd, 0);
    if (p != MAP_FAILED) {
      int slot = RegisterMap(p, static_cast<size_t>(st.st_size));
      if (slot >= 0) {
        file->data_ = static_cast<const std::byte*>(p);
        file->size_ = static_cast<size_t>(st.st_size);
        file->mapped_ = true;
        file->slot_ = slot;
        ::close(fd);
        return std::shared_ptr<const MappedFile>(std::move(file));
      }
      // No slot left to guard the map with: read the file instead.
      ::munmap(p, static_cast<size_t>(st.st_size));
    }
  }
  Status s = ReadAll(fd, path, &file->owned_);
  ::close(fd);
  if (!s.ok()) return s;
  file->data_ = reinterpret_cast<const std::byte*>(file->owned_.data());
  file->size_ = file->owned_.size();
  return std::shared_ptr<const MappedFile>(std::move(file));
}

MappedFile::~MappedFile() {
  if (!mapped_) return;
  UnregisterMap(slot_);
  ::munmap(const_cast<std::byte*>(data_), size_);
}

Status MappedFile::CheckIntact() const {
  if (slot_ < 0 ||
      !g_map_slots[slot_].faulted.load(std::memory_order_acquire)) {
    return Status::Ok();
  }
  return Status::IoError(path_,
                         "the file shrank while it was being read (truncated "
                         "or rewritten by another process)");
}

bool MappedFile::RangeFaulted(const void* p, size_t n) {
  if (!g_any_map_faulted.load(std::memory_order_acquire)) return false;
  uintptr_t a = reinterpret_cast<uintptr_t>(p), b = a + n;
  for (const MapSlot& slot : g_map_slots) {
    if (!slot.faulted.load(std::memory_order_acquire)) continue;
    uintptr_t begin = slot.begin.load(std::memory_order_acquire);
    if (begin > 1 && a < slot.end.load(std::memory_order_acquire) &&
        begin < b) {
      return true;
    }
  }
  return false;
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, "cannot open");
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path, "is a directory, expected a file");
  }
  std::string out;
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    out.reserve(static_cast<size_t>(st.st_size));
  }
  Status s = ReadAll(fd, path, &out);
  ::close(fd);
  if (!s.ok()) return s;
  return out;
}

namespace {

// Creates `file`, which must not exist (not even as a symbolic link: a
// link planted at the name is never followed), and writes `data` to it; on
// failure removes what it created. Messages name `path`, the file the
// caller means (`file` may be its temporary name). `*exists` (if given) is
// set when the name was taken.
Status WriteNewFileFrom(Env* env, const std::string& path,
                        const std::string& file, const ChunkSource& source,
                        bool* exists = nullptr) {
  int fd = env->Open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0644);
  if (fd < 0) {
    if (exists != nullptr) *exists = errno == EEXIST;
    return ErrnoStatus(path, errno == EEXIST ? "cannot create (the name is "
                                               "taken)"
                                             : "cannot create");
  }
  std::string chunk;
  for (;;) {
    chunk.clear();
    bool more = source(&chunk);
    if (!env->WriteAll(fd, chunk)) {
      Status s = ErrnoStatus(path, "write failed");
      env->Close(fd);
      env->Unlink(file);
      return s;
    }
    if (!more) break;
  }
  if (env->Close(fd) != 0) {
    Status s = ErrnoStatus(path, "close failed");
    env->Unlink(file);
    return s;
  }
  return Status::Ok();
}

ChunkSource WholeText(std::string_view data) {
  return [data](std::string* chunk) {
    chunk->assign(data);
    return false;
  };
}

// A temporary name beside `path` that no other writer picks: the pid, a
// per-process counter and 64 random bits.
std::string TempName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = [] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
  }();
  uint64_t n = counter.fetch_add(1, std::memory_order_relaxed);
  char tail[64];
  std::snprintf(
      tail, sizeof(tail), ".tmp.%d.%llu.%016llx", static_cast<int>(::getpid()),
      static_cast<unsigned long long>(n),
      static_cast<unsigned long long>(salt ^ (n * 0x9e3779b97f4a7c15)));
  return path + tail;
}

// Writes the source's text under a fresh temporary name beside `path`;
// returns it.
StatusOr<std::string> WriteTemp(Env* env, const std::string& path,
                                const ChunkSource& source) {
  for (int attempt = 0;; ++attempt) {
    std::string tmp = TempName(path);
    bool exists = false;
    Status s = WriteNewFileFrom(env, path, tmp, source, &exists);
    if (s.ok()) return tmp;
    if (!exists || attempt == 8) return s;
  }
}

}  // namespace

Status WriteFileDirect(const std::string& path, std::string_view data) {
  return WriteNewFileFrom(Env::Current(), path, path, WholeText(data));
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  Env* env = Env::Current();
  LOCKSTEP_ASSIGN_OR_RETURN(std::string tmp,
                            WriteTemp(env, path, WholeText(data)));
  // rename() replaces whatever is at `path`, a symbolic link included,
  // without following it.
  if (env->Rename(tmp, path) != 0) {
    Status s = ErrnoStatus(path, "rename failed");
    env->Unlink(tmp);
    return s;
  }
  return Status::Ok();
}

StatusOr<bool> WriteFileIfAbsent(const std::string& path,
                                 std::string_view data) {
  return WriteFileIfAbsentFrom(path, WholeText(data));
}

StatusOr<bool> WriteFileIfAbsentFrom(const std::string& path,
                                     const ChunkSource& source) {
  Env* env = Env::Current();
  LOCKSTEP_ASSIGN_OR_RETURN(std::string tmp, WriteTemp(env, path, source));
  // link() publishes the whole file under `path` only if nothing is there.
  int rc = env->Link(tmp, path);
  int err = errno;
  env->Unlink(tmp);
  if (rc == 0) return true;
  if (err == EEXIST) return false;
  errno = err;
  return ErrnoStatus(path, "cannot publish");
}

StatusOr<std::unique_ptr<DirLock>> DirLock::Acquire(const std::string& dir) {
  std::string path = dir + "/.lockstep.lock";
  int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(dir, "cannot create the lock file");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::IoError(dir,
                             "another lockstep run is writing to this "
                             "directory. Note: wait for it, or give another "
                             "output directory");
    }
    errno = err;
    return ErrnoStatus(dir, "cannot lock");
  }
  return std::unique_ptr<DirLock>(new DirLock(fd, dir));
}

DirLock::~DirLock() { ::close(fd_); }

namespace {

// Whether `name` ends as TempName's names do: ".tmp.<pid>.<n>.<16 hex>".
bool IsTempName(std::string_view name) {
  size_t at = name.rfind(".tmp.");
  if (at == std::string_view::npos || at == 0) return false;
  std::string_view tail = name.substr(at + 5);
  auto digits = [&](bool hex, size_t exact) {
    size_t n = 0;
    while (n < tail.size() &&
           (std::isdigit(static_cast<unsigned char>(tail[n])) ||
            (hex && tail[n] >= 'a' && tail[n] <= 'f')))
      ++n;
    bool ok = n > 0 && (exact == 0 || n == exact);
    tail.remove_prefix(n);
    return ok;
  };
  auto dot = [&] {
    if (tail.empty() || tail[0] != '.') return false;
    tail.remove_prefix(1);
    return true;
  };
  return digits(false, 0) && dot() && digits(false, 0) && dot() &&
         digits(true, 16) && tail.empty();
}

}  // namespace

std::vector<std::string> DirLock::RemoveStaleTempFiles() const {
  Env* env = Env::Current();
  std::vector<std::string> removed;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir_, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!IsTempName(name) || !it->is_regular_file(ec)) continue;
    if (env->Unlink(it->path().string()) == 0) removed.push_back(name);
  }
  return removed;
}

StatusOr<std::string> MakePrivateTempDir(const std::string& beside) {
  std::string tmpl = beside + ".tmpdir.XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr)
    return ErrnoStatus(beside, "cannot create a temporary directory");
  return tmpl;
}

namespace {

// CreateDirs through `env`: the parents first, as create_directories does
// (symbolic links followed). Messages name `whole`, the path asked for.
Status CreateDirsWith(Env* env, const std::string& whole, std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (IsDirectory(path)) return Status::Ok();
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0)
    LOCKSTEP_RETURN_IF_ERROR(CreateDirsWith(env, whole, path.substr(0, slash)));
  if (env->Mkdir(path, 0755) == 0) return Status::Ok();
  int err = errno;
  if (err == EEXIST && IsDirectory(path)) return Status::Ok();  // a race
  return Status::IoError(
      whole, std::string("cannot create directory: ") + std::strerror(err));
}

}  // namespace

Status CreateDirs(const std::string& path) {
  if (path.empty())
    return Status::IoError(path, "cannot create directory: empty path");
  return CreateDirsWith(Env::Current(), path, path);
}

Status CreateDirsUnder(const std::string& root, const std::string& path) {
  LOCKSTEP_RETURN_IF_ERROR(CreateDirs(root));
  if (path.size() <= root.size()) return Status::Ok();
  Env* env = Env::Current();
  std::string at = root;
  size_t b = root.size() + 1;
  while (b <= path.size()) {
    size_t e = path.find('/', b);
    if (e == std::string::npos) e = path.size();
    std::string part = path.substr(b, e - b);
    b = e + 1;
    if (part.empty() || part == ".") continue;
    at += "/" + part;
    if (part == "..")
      return Status::InvalidArgument(at, "refused: '..' below the dump root");
    if (env->Mkdir(at, 0755) == 0) continue;
    if (errno != EEXIST) return ErrnoStatus(at, "cannot create directory");
    struct stat st;
    if (::lstat(at.c_str(), &st) != 0) return ErrnoStatus(at, "cannot stat");
    if (S_ISLNK(st.st_mode)) {
      return Status::IoError(at,
                             "refused: a symbolic link (a dump directory is "
                             "never written through one)");
    }
    if (!S_ISDIR(st.st_mode))
      return Status::IoError(at, "exists and is not a directory");
  }
  return Status::Ok();
}

Status CheckOutputFile(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("output file", "empty path");
  std::filesystem::path p(path);
  std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return ErrnoStatus(path, ("cannot write there: " + dir).c_str());
  if (!S_ISDIR(st.st_mode))
    return Status::IoError(
        path, "cannot write there: " + dir + " is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return ErrnoStatus(path, ("cannot write there: " + dir).c_str());
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Status::InvalidArgument(path, "is a directory, expected a file");
  return Status::Ok();
}

Status RemoveFileIfPresent(const std::string& path) {
  if (Env::Current()->Unlink(path) == 0 || errno == ENOENT) return Status::Ok();
  return ErrnoStatus(path, "cannot remove");
}

bool PathExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

}  // namespace lockstep
