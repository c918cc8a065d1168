// Reading and writing files: whole-file reads, read-only memory maps and
// atomic writes (temporary name + rename). Errors name the path.
// Thread safety: free functions are thread-safe; a MappedFile may be read from
// many threads at once.
#ifndef LOCKSTEP_CORE_FILE_H_
#define LOCKSTEP_CORE_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "lockstep/core/status.h"

namespace lockstep {

// A read-only view of a whole file, memory-mapped where possible (falls back
// to reading into memory, e.g. for pipes). Empty files give size() == 0.
class MappedFile {
 public:
  // `populate`: map every page up front (MAP_POPULATE) for files of 1 MiB
  // or more, which is cheaper than a page fault per page when the caller
  // reads the whole file through the map; false maps lazily (for callers that
  // read a header through the map and the bulk with pread).
  static StatusOr<std::shared_ptr<const MappedFile>> Open(
      const std::string& path, bool populate = true);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::string_view view() const {
    return {reinterpret_cast<const char*>(data_), size_};
  }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;  // used when the file could not be mapped
};

// Reads a whole file.
StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `data` to `path` atomically: writes `path.tmp.<pid>`, fsyncs
// nothing (speed), then renames over `path`. On failure the temporary file is
// removed and `path` is untouched.
Status WriteFileAtomic(const std::string& path, std::string_view data);

// Writes `data` to `path` in place (created or truncated): one file
// creation instead of two names, for files whose completeness another file
// vouches for (a probe's tensor files: dump.json is written after them). On
// failure `path` is removed, so no partial file is left.
Status WriteFileDirect(const std::string& path, std::string_view data);

// Creates a directory and its parents; OK if it exists.
Status CreateDirs(const std::string& path);

bool PathExists(const std::string& path);
bool IsDirectory(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_FILE_H_
