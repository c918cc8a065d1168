#include "lockstep/format/pack_writer.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/str_cat.h"
#include "lockstep/format/crc32.h"

namespace lockstep {
namespace {

constexpr char kPackZeros[kPackAlignment] = {};

void PutPackLe(uint64_t v, size_t n, std::string* out) {
  for (size_t i = 0; i < n; ++i)
    out->push_back(static_cast<char>(v >> (8 * i)));
}

Status PackErrno(const std::string& path, const char* what, int err) {
  return Status::IoError(path, StrCat(what, ": ", std::strerror(err)));
}

std::string EncodePackIndex(const std::vector<PackEntry>& entries) {
  std::string out;
  for (const PackEntry& e : entries) {
    PutPackLe(e.offset, 8, &out);
    PutPackLe(e.size, 8, &out);
    PutPackLe(e.head, 4, &out);
    PutPackLe(e.head_crc, 4, &out);
    PutPackLe(e.data_crc, 4, &out);
    PutPackLe(e.name.size(), 4, &out);
    out += e.name;
  }
  return out;
}

}  // namespace

PackWriter::PackWriter(Env* env, std::string path, int fd, NpyWriteOptions npy)
    : env_(env), path_(std::move(path)), npy_(npy), fd_(fd) {}

PackWriter::~PackWriter() {
  if (fd_ >= 0) env_->Close(fd_);
}

StatusOr<std::unique_ptr<PackWriter>> PackWriter::Create(
    const std::string& path, NpyWriteOptions npy) {
  Env* env = Env::Current();
  int fd = env->Open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     0644);
  if (fd < 0) {
    int err = errno;
    return PackErrno(
        path,
        err == EEXIST ? "cannot create (the name is taken)" : "cannot create",
        err);
  }
  std::unique_ptr<PackWriter> w(new PackWriter(env, path, fd, npy));
  std::string header(kPackMagic);
  PutPackLe(kPackVersion, 4, &header);
  PutPackLe(kPackAlignment, 4, &header);
  header.resize(kPackHeaderSize, '\0');
  std::string_view piece = header;
  Status st = w->WriteAt(&piece, 1, 0);
  if (!st.ok()) {
    w->Abandon();
    return st;
  }
  return w;
}

size_t PackWriter::entry_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

// Writes the pieces contiguously at `at`, resuming partial writes.
Status PackWriter::WriteAt(const std::string_view* pieces, size_t n,
                           uint64_t at) {
  constexpr size_t kMaxPieces = 4;
  iovec iov[kMaxPieces];
  size_t count = 0;
  for (size_t i = 0; i < n && count < kMaxPieces; ++i) {
    if (pieces[i].empty()) continue;
    iov[count].iov_base = const_cast<char*>(pieces[i].data());
    iov[count++].iov_len = pieces[i].size();
  }
  iovec* v = iov;
  while (count > 0) {
    ssize_t w =
        env_->PWritev(fd_, v, static_cast<int>(count), static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return PackErrno(path_, "write failed", errno);
    if (w == 0) return PackErrno(path_, "write failed", EIO);
    at += static_cast<uint64_t>(w);
    size_t left = static_cast<size_t>(w);
    while (count > 0 && left >= v->iov_len) {
      left -= v->iov_len;
      ++v;
      --count;
    }
    if (count > 0) {
      v->iov_base = static_cast<char*>(v->iov_base) + left;
      v->iov_len -= left;
    }
  }
  return Status::Ok();
}

Status PackWriter::Append(std::string_view name, const Tensor& t) {
  if (!IsValidPackName(name)) {
    return Status::InvalidArgument(
        StrCat("tensor name '", name, "'"),
        "not a pack entry name (empty, '.', '..', too long, or has '/' or "
        "NUL)");
  }
  // Encoded and checksummed before taking the lock: writers on several
  // threads overlap this work.
  std::string widened;
  std::string head = EncodeNpyHeaderOf(t, npy_);
  std::string_view data(reinterpret_cast<const char*>(t.data()), t.nbytes());
  if (NpyWidensBFloat16(t, npy_)) {
    widened = EncodeNpy(t, npy_).substr(head.size());
    data = widened;
  }
  PackEntry e{std::string(name),
              0,
              head.size() + data.size(),
              static_cast<uint32_t>(head.size()),
              Crc32(head),
              Crc32(data)};
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_)
    return Status::InvalidArgument(path_, "the pack is already finished");
  if (!names_.insert(e.name).second) {
    return Status::InvalidArgument(
        path_, StrCat("entry '", name, "' is already in the pack"));
  }
  e.offset = end_;
  size_t pad = (kPackAlignment - e.size % kPackAlignment) % kPackAlignment;
  std::string_view pieces[3] = {head, data, std::string_view(kPackZeros, pad)};
  Status st = WriteAt(pieces, 3, e.offset);
  if (!st.ok()) {
    names_.erase(e.name);
    // Cut back to the entries before this one: the pack stays valid.
    if (env_->Truncate(fd_, static_cast<off_t>(end_)) != 0) {
      st = st.WithContext("and cutting the file back failed");
    }
    return st;
  }
  end_ += e.size + pad;
  entries_.push_back(std::move(e));
  return Status::Ok();
}

Status PackWriter::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return finish_status_;
  closed_ = true;
  std::string index = EncodePackIndex(entries_);
  std::string footer;
  PutPackLe(end_, 8, &footer);
  PutPackLe(index.size(), 8, &footer);
  PutPackLe(entries_.size(), 4, &footer);
  PutPackLe(Crc32(index), 4, &footer);
  footer += kPackEndMagic;
  std::string_view pieces[2] = {index, footer};
  finish_status_ = WriteAt(pieces, 2, end_);
  if (env_->Close(fd_) != 0 && finish_status_.ok())
    finish_status_ = PackErrno(path_, "close failed", errno);
  fd_ = -1;
  return finish_status_;
}

size_t PackWriter::Abandon() {
  std::lock_guard<std::mutex> lock(mu_);
  if (abandoned_) return 0;
  abandoned_ = true;
  if (fd_ >= 0) env_->Close(fd_);
  fd_ = -1;
  env_->Unlink(path_);
  if (!closed_) finish_status_ = Status::IoError(path_, "abandoned");
  closed_ = true;
  size_t n = entries_.size();
  entries_.clear();
  return n;
}

}  // namespace lockstep
