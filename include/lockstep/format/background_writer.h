// BackgroundWriter: writes tensors as .pt or .npy files (or appends them to
// a tensor pack) on a worker thread, so that
// a probe's training step does not wait for the disk. The queue is bounded
// in bytes: Enqueue blocks while more than `max_queued_bytes` wait, so a
// slow disk slows training down instead of exhausting memory.
//
// Files are written by `threads` worker threads (default 1; more can keep
// several writes in flight on a file system that waits on the disk). A task
// (EnqueueTask) runs alone, after every job queued before it is done.
//
// Thread safety: Enqueue, Drain and the destructor may be called from any
// threads. With threads == 1, files are written in the order enqueued.
#ifndef LOCKSTEP_FORMAT_BACKGROUND_WRITER_H_
#define LOCKSTEP_FORMAT_BACKGROUND_WRITER_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/format/pack_writer.h"
#include "lockstep/format/tensor.h"

namespace lockstep {

class BackgroundWriter {
 public:
  explicit BackgroundWriter(size_t max_queued_bytes = size_t{256} << 20,
                            int threads = 1);
  ~BackgroundWriter();  // writes what is queued, then joins
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues `t` to be written to `path` in the format its extension names
  // (WriteTensorFile: torch.save bytes for ".pt", numpy.save bytes
  // otherwise), written in place; a failed write leaves no file. A tensor
  // larger than the bound is accepted when the queue is empty.
  void Enqueue(std::string path, Tensor t);
  // Queues `t` to be appended to `pack` as entry `name` (PackWriter::Append;
  // a failure is reported as a file would be, by `name`).
  void EnqueueToPack(std::shared_ptr<PackWriter> pack, std::string name,
                     Tensor t);

  // Queues `task` to run on the worker thread after everything queued
  // before it (a probe writes a step's dump.json this way, after the step's
  // tensor files). A failed task counts like a file not written, named
  // `what`.
  void EnqueueTask(std::string what, std::function<Status()> task);

  // A file (or task) that could not be written, and why (e.g. "No space
  // left on device").
  struct Failure {
    std::string path;  // the file, or the task's `what`
    std::string reason;
    bool task = false;
  };

  // Waits until every queued file is written; returns the first error since
  // the last Drain (later errors of the same batch are counted in it). If
  // `failed` is given, it receives the files not written since the last
  // Drain (the first kMaxFailuresKept of them).
  Status Drain(std::vector<Failure>* failed = nullptr);
  static constexpr size_t kMaxFailuresKept = 64;

  size_t files_written() const;

 private:
  struct Job {
    std::string path;  // or the pack entry's name
    Tensor tensor;
    std::shared_ptr<PackWriter> pack;  // set: append to it
    std::function<Status()> task;      // set: run it instead of writing a file
  };
  void Push(Job job);
  void Run();

  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::condition_variable not_full_, not_empty_, idle_;
  std::deque<Job> jobs_;
  size_t queued_bytes_ = 0;
  int busy_ = 0;  // jobs being run
  bool stop_ = false;
  Status first_error_;
  size_t errors_ = 0;
  size_t task_errors_ = 0;  // of errors_, failed tasks (not tensor files)
  std::vector<Failure> failures_;
  size_t written_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_BACKGROUND_WRITER_H_
