#include "lockstep/core/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

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

}  // namespace

StatusOr<std::shared_ptr<const MappedFile>> MappedFile::Open(
    const std::string& path, bool populate) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    // Pre-faulting the whole map in one call is several times cheaper than
    // taking a page fault per 4 KiB while reading (files from the page cache).
    int flags =
        MAP_PRIVATE | (populate && st.st_size >= (1 << 20) ? MAP_POPULATE : 0);
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, flags,
                     fd, 0);
    if (p != MAP_FAILED) {
      file->data_ = static_cast<const std::byte*>(p);
      file->size_ = static_cast<size_t>(st.st_size);
      file->mapped_ = true;
      ::close(fd);
      return std::shared_ptr<const MappedFile>(std::move(file));
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
  if (mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
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

// Writes all of `data` to `fd`, retrying on EINTR; errno is kept on failure.
bool WriteAll(int fd, std::string_view data) {
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

// Writes `data` to `file` (created or truncated); on failure removes it.
// Messages name `path`, the file the caller means (`file` may be its
// temporary name).
Status WriteNewFile(const std::string& path, const std::string& file,
                    std::string_view data) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(path, "cannot create");
  if (!WriteAll(fd, data)) {
    Status s = ErrnoStatus(path, "write failed");
    ::close(fd);
    ::unlink(file.c_str());
    return s;
  }
  if (::close(fd) != 0) {
    Status s = ErrnoStatus(path, "close failed");
    ::unlink(file.c_str());
    return s;
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileDirect(const std::string& path, std::string_view data) {
  return WriteNewFile(path, path, data);
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  LOCKSTEP_RETURN_IF_ERROR(WriteNewFile(path, tmp, data));
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = ErrnoStatus(path, "rename failed");
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::Ok();
}

Status CreateDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec)
    return Status::IoError(path, "cannot create directory: " + ec.message());
  return Status::Ok();
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
