// TensorBoardWriter: writes scalar series as a TensorBoard event file, so
// tests can make their own files and lockstep programs can log curves that
// TensorBoard shows. The file starts with a file_version event
// ("brain.Event:2"); each scalar is one Event {wall_time, step, summary
// {value {tag, simple_value}}} in a TFRecord (curve/tfrecord.h).
//
// Unlike lockstep's other writers this one appends in place instead of
// writing a temporary and renaming: TensorBoard reads event files while
// they grow, and a torn tail is what its readers (and ours) expect. The
// file is written through the Env current at Create (core/env.h).
// Thread safety: one writer per thread (no internal locking).
#ifndef LOCKSTEP_CURVE_TB_WRITER_H_
#define LOCKSTEP_CURVE_TB_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "lockstep/core/env.h"
#include "lockstep/core/status.h"

namespace lockstep {

class TensorBoardWriter {
 public:
  // Opens a new event file. `path` is a directory (existing or ending in
  // '/'; created if needed), where the file is named
  // "events.out.tfevents.<unix seconds>.<host>.<pid>.0", or a file path used
  // as given (overwritten). Writes the file_version event.
  static StatusOr<std::unique_ptr<TensorBoardWriter>> Create(
      const std::string& path);
  ~TensorBoardWriter();  // flushes and closes; errors are lost, so Flush()
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  // Appends one scalar event (buffered). `value` is stored as float32, as
  // simple_value is; NaN and ±inf are kept. `tag` may be any UTF-8 string.
  Status AddScalar(std::string_view tag, int64_t step, double value);
  // Writes buffered events to the operating system.
  Status Flush();

  const std::string& path() const { return path_; }

 private:
  TensorBoardWriter(Env* env, std::string path, int fd)
      : env_(env), path_(std::move(path)), fd_(fd) {}
  Status WriteEvent(const std::string& event);

  Env* env_;
  std::string path_;
  int fd_;
  std::string buffer_;  // events not yet written
};

}  // namespace lockstep

#endif  // LOCKSTEP_CURVE_TB_WRITER_H_
