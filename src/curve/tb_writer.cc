#include "lockstep/curve/tb_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "curve/log_builder.h"
#include "curve/protobuf.h"
#include "lockstep/core/file.h"
#include "lockstep/curve/tfrecord.h"

namespace lockstep {
namespace {

using curve_internal::StrCat;

double WallTime() {
  using namespace std::chrono;  // NOLINT
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Event {wall_time = 1, step = 2} and the caller's body fields.
std::string EventHeader(int64_t step) {
  std::string e;
  curve_internal::AppendFixed64(&e, 1, curve_internal::DoubleBits(WallTime()));
  curve_internal::AppendTag(&e, 2, curve_internal::kVarint);
  curve_internal::AppendVarint(&e, static_cast<uint64_t>(step));
  return e;
}

std::string FileNameIn(const std::string& dir) {
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  host[sizeof(host) - 1] = '\0';
  auto secs = static_cast<int64_t>(WallTime());
  return StrCat(dir, dir.back() == '/' ? "" : "/", "events.out.tfevents.",
                std::to_string(secs), ".", host, ".", std::to_string(getpid()),
                ".0");
}

}  // namespace

StatusOr<std::unique_ptr<TensorBoardWriter>> TensorBoardWriter::Create(
    const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("tensorboard", "empty path");
  std::string file_path = path;
  if (IsDirectory(path) || path.back() == '/') {
    LOCKSTEP_RETURN_IF_ERROR(CreateDirs(path));
    file_path = FileNameIn(path);
  }
  Env* env = Env::Current();
  int fd = env->Open(file_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return Status::IoError(file_path, std::strerror(errno));
  std::unique_ptr<TensorBoardWriter> w(
      new TensorBoardWriter(env, file_path, fd));
  std::string event = EventHeader(0);
  curve_internal::AppendLenField(&event, 3, "brain.Event:2");
  LOCKSTEP_RETURN_IF_ERROR(w->WriteEvent(event));
  return w;
}

TensorBoardWriter::~TensorBoardWriter() {
  (void)Flush();
  env_->Close(fd_);
}

Status TensorBoardWriter::AddScalar(std::string_view tag, int64_t step,
                                    double value) {
  std::string v;
  curve_internal::AppendLenField(&v, 1, tag);
  curve_internal::AppendFixed32(
      &v, 2, curve_internal::FloatBits(static_cast<float>(value)));
  std::string summary;
  curve_internal::AppendLenField(&summary, 1, v);
  std::string event = EventHeader(step);
  curve_internal::AppendLenField(&event, 5, summary);
  return WriteEvent(event);
}

Status TensorBoardWriter::WriteEvent(const std::string& event) {
  buffer_ += EncodeTfRecord(event);
  constexpr size_t kBufferBytes = 8192;  // as stdio's
  return buffer_.size() < kBufferBytes ? Status::Ok() : Flush();
}

Status TensorBoardWriter::Flush() {
  bool written = env_->WriteAll(fd_, buffer_);
  int err = errno;
  buffer_.clear();  // on failure the events are lost, as with stdio's
  if (!written) return Status::IoError(path_, std::strerror(err));
  return Status::Ok();
}

}  // namespace lockstep
