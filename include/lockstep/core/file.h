// Reading and writing files: whole-file reads, read-only memory maps and
// atomic writes (temporary name + rename). Errors name the path. Every
// write, rename, link, unlink and mkdir goes through Env::Current()
// (core/env.h), so tests can make them fail.
// Thread safety: free functions are thread-safe; a MappedFile may be read from
// many threads at once.
#ifndef LOCKSTEP_CORE_FILE_H_
#define LOCKSTEP_CORE_FILE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

// A read-only view of a whole file, memory-mapped where possible (falls back
// to reading into memory, e.g. for pipes). Empty files give size() == 0.
//
// A file that another process truncates while it is mapped would kill the
// reader with SIGBUS on the next access past the new end. Every mapping is
// registered with a process-wide SIGBUS handler instead: such an access
// reads zeros (the pages from the fault to the end of the map are replaced
// by anonymous zero pages) and the map is marked faulted, which readers check
// after use (CheckIntact, RangeFaulted) to turn the data into an error. A
// SIGBUS outside every registered map goes to the handler installed before
// ours (or kills the process, as without ours).
class MappedFile {
 public:
  // `populate`: map every page up front (MAP_POPULATE) for files of 1 MiB
  // or more, which is cheaper than a page fault per page when the caller
  // reads the whole file through the map; false maps lazily (for callers that
  // read a header through the map and the bulk with pread).
  // `regular_only`: refuse anything but a regular file (InvalidArgument
  // "not a regular file"), opened without following a symbolic link at
  // `path` and without blocking (a FIFO never stalls the caller).
  static StatusOr<std::shared_ptr<const MappedFile>> Open(
      const std::string& path, bool populate = true, bool regular_only = false);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const {
    return {reinterpret_cast<const char*>(data_), size_};
  }
  const std::string& path() const { return path_; }
  // Whether data() is a map of the file (else a heap copy of it: the file
  // could not be mapped, or every SIGBUS guard slot was taken).
  bool mapped() const { return mapped_; }

  // Ok, or IoError naming the file if it shrank while mapped (some bytes
  // read as zeros). Call after the bytes were read.
  Status CheckIntact() const;
  // Whether any byte of [p, p + n) lies in a registered map that faulted.
  static bool RangeFaulted(const void* p, size_t n);

 private:
  MappedFile() = default;
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  int slot_ = -1;      // index in the SIGBUS registry while mapped
  std::string owned_;  // used when the file could not be mapped
};

// Reads a whole file.
StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `data` to `path` atomically: writes a fresh temporary name beside
// it (`path.tmp.<pid>.<n>.<random>`, created exclusively, never through a
// symbolic link), fsyncs nothing (speed), then renames over `path` (which
// replaces a file or a symbolic link there, never writing through it). On
// failure the temporary file is removed and `path` is untouched.
Status WriteFileAtomic(const std::string& path, std::string_view data);

// Like WriteFileAtomic, but publishes only if nothing is at `path` (link(),
// atomic against other processes doing the same): true when written, false
// when the name was taken (nothing written).
StatusOr<bool> WriteFileIfAbsent(const std::string& path,
                                 std::string_view data);

// Produces a file's text a chunk at a time: sets *chunk (empty on entry) to
// the next piece; returns false when that piece was the last.
using ChunkSource = std::function<bool(std::string* chunk)>;

// WriteFileIfAbsent for text too large to hold whole: written as `source`
// produces it, into the temporary file once that is created (the source is
// read once, until it returns false, or until a write fails).
StatusOr<bool> WriteFileIfAbsentFrom(const std::string& path,
                                     const ChunkSource& source);

// Writes `data` to a new file `path` in place: one file creation instead of
// two names, for files whose completeness another file vouches for (a
// probe's tensor files: dump.json is written after them). `path` must not
// exist — not as a file, not as a symbolic link (IoError "the name is
// taken"): nothing is written through a link planted there. On failure
// `path` is removed, so no partial file is left.
Status WriteFileDirect(const std::string& path, std::string_view data);

// Creates a new directory `beside.tmpdir.XXXXXX` (mkdtemp: a fresh name,
// mode 0700) for a writer that must hand a file name to a library that opens
// it itself; returns its path. The caller removes it.
StatusOr<std::string> MakePrivateTempDir(const std::string& beside);

// An exclusive lock on an output directory, held while a run writes there
// (flock on `dir/.lockstep.lock`, released when the object dies or the
// process exits, even by a crash): two runs never write one directory at
// once, so no run reports a file another replaced.
class DirLock {
 public:
  // Errors: IoError "another lockstep run is writing to this directory" when
  // it is held; IoError when the lock file cannot be created (a symbolic
  // link planted at its name is not followed).
  static StatusOr<std::unique_ptr<DirLock>> Acquire(const std::string& dir);
  ~DirLock();

  // Removes the temporary files (the "<name>.tmp.<pid>.<n>.<16 hex>" of
  // WriteFileAtomic and WriteFileIfAbsent) that a writer killed mid-write
  // (kill -9, a crash, the machine off) left in the locked directory: while
  // the lock is held no other lockstep run writes there, so every such
  // file is stale. Returns their names; what cannot be removed is left.
  std::vector<std::string> RemoveStaleTempFiles() const;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  DirLock(int fd, std::string dir) : fd_(fd), dir_(std::move(dir)) {}
  int fd_;
  std::string dir_;
};

// Creates a directory and its parents; OK if it exists.
Status CreateDirs(const std::string& path);

// Creates `path`, which lies under `root`: `root` as create_directories
// does (the user's own path, links followed), then each component below it
// with mkdir, never through a symbolic link. A component that exists must
// be a directory and not a link (IoError "refused: ... is a symbolic link"
// otherwise), so that a link planted in a shared dump directory can not send
// writes elsewhere. REQUIRES: `path` is `root` or begins with `root` + '/'.
Status CreateDirsUnder(const std::string& root, const std::string& path);

// Whether a file could be written at `path` now, asked before long work
// rather than found out after it: its directory exists, is a directory and
// is writable, and `path` is not a directory. IoError or InvalidArgument
// naming `path` and why; Ok says nothing about free space.
Status CheckOutputFile(const std::string& path);

// Removes the file (or symbolic link, never its target) at `path`; Ok when
// nothing is there. IoError naming `path` otherwise (a directory included).
Status RemoveFileIfPresent(const std::string& path);

bool PathExists(const std::string& path);
bool IsDirectory(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_FILE_H_
