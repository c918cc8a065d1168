#include "lockstep/format/background_writer.h"

#include <algorithm>

#include "lockstep/format/tensor_file.h"

namespace lockstep {

BackgroundWriter::BackgroundWriter(size_t max_queued_bytes, int threads)
    : max_bytes_(max_queued_bytes) {
  for (int i = 0; i < std::max(threads, 1); ++i) {
    workers_.emplace_back([this] { Run(); });
  }
}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  not_empty_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void BackgroundWriter::Enqueue(std::string path, Tensor t) {
  Push(Job{std::move(path), std::move(t), nullptr, {}});
}

void BackgroundWriter::EnqueueToPack(std::shared_ptr<PackWriter> pack,
                                     std::string name, Tensor t) {
  Push(Job{std::move(name), std::move(t), std::move(pack), {}});
}

void BackgroundWriter::Push(Job job) {
  size_t bytes = job.tensor.nbytes();
  std::unique_lock<std::mutex> lock(mu_);
  not_full_.wait(lock, [&] {
    return jobs_.empty() || queued_bytes_ + bytes <= max_bytes_;
  });
  queued_bytes_ += bytes;
  jobs_.push_back(std::move(job));
  not_empty_.notify_one();
}

void BackgroundWriter::EnqueueTask(std::string what,
                                   std::function<Status()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.push_back(Job{std::move(what), Tensor(), nullptr, std::move(task)});
  not_empty_.notify_one();
}

Status BackgroundWriter::Drain(std::vector<Failure>* failed) {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return jobs_.empty() && busy_ == 0; });
  Status st = first_error_;
  if (errors_ > 1) {
    size_t files = errors_ - task_errors_;
    std::string what;
    if (files > 0) what = std::to_string(files) + " tensor files";
    if (task_errors_ > 0) {
      what += (what.empty() ? "" : " and ") + std::to_string(task_errors_) +
              (task_errors_ == 1 ? " other write" : " other writes");
    }
    st = st.WithContext(what + " failed; the first");
  }
  if (failed != nullptr) *failed = std::move(failures_);
  failures_.clear();
  first_error_ = Status::Ok();
  errors_ = 0;
  task_errors_ = 0;
  return st;
}

size_t BackgroundWriter::files_written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return written_;
}

void BackgroundWriter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // A task waits at the front until the jobs before it are done.
    not_empty_.wait(lock, [&] {
      return (stop_ && jobs_.empty()) ||
             (!jobs_.empty() && (!jobs_.front().task || busy_ == 0));
    });
    if (jobs_.empty()) return;  // stop_ and nothing left
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    ++busy_;
    lock.unlock();
    bool is_task = static_cast<bool>(job.task);
    // In place, not temporary file + rename (half the file-system work):
    // the probe writes dump.json after the files, and a failed write
    // leaves no file.
    NpyWriteOptions direct;
    direct.atomic = false;
    Status st = is_task    ? job.task()
                : job.pack ? job.pack->Append(job.path, job.tensor)
                           : WriteTensorFile(job.path, job.tensor, direct);
    size_t bytes = is_task ? 0 : job.tensor.nbytes();
    std::string path = std::move(job.path);
    job = Job{};  // release the tensor's memory before taking the lock
    lock.lock();
    --busy_;
    queued_bytes_ -= bytes;
    if (st.ok()) {
      if (!is_task) ++written_;
    } else {
      if (errors_++ == 0) first_error_ = st;
      task_errors_ += is_task;
      if (failures_.size() < kMaxFailuresKept) {
        failures_.push_back(Failure{std::move(path), st.message(), is_task});
      }
    }
    not_full_.notify_all();
    // A task at the front may now run; Drain may be done.
    not_empty_.notify_all();
    if (jobs_.empty() && busy_ == 0) idle_.notify_all();
  }
}

}  // namespace lockstep
