#include "lockstep/format/background_writer.h"

#include "lockstep/format/npy.h"

namespace lockstep {

BackgroundWriter::BackgroundWriter(size_t max_queued_bytes)
    : max_bytes_(max_queued_bytes), worker_([this] { Run(); }) {}

BackgroundWriter::~BackgroundWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  not_empty_.notify_all();
  worker_.join();
}

void BackgroundWriter::Enqueue(std::string path, Tensor t) {
  size_t bytes = t.nbytes();
  std::unique_lock<std::mutex> lock(mu_);
  not_full_.wait(lock, [&] {
    return jobs_.empty() || queued_bytes_ + bytes <= max_bytes_;
  });
  queued_bytes_ += bytes;
  jobs_.push_back(Job{std::move(path), std::move(t)});
  not_empty_.notify_one();
}

void BackgroundWriter::EnqueueTask(std::string what,
                                   std::function<Status()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.push_back(Job{std::move(what), Tensor(), std::move(task)});
  not_empty_.notify_one();
}

Status BackgroundWriter::Drain(std::vector<Failure>* failed) {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return jobs_.empty() && !busy_; });
  Status st = first_error_;
  if (errors_ > 1) {
    st = st.WithContext(std::to_string(errors_) +
                        " tensor files not written; the first");
  }
  if (failed != nullptr) *failed = std::move(failures_);
  failures_.clear();
  first_error_ = Status::Ok();
  errors_ = 0;
  return st;
}

size_t BackgroundWriter::files_written() const {
  std::lock_guard<std::mutex> lock(mu_);
  return written_;
}

void BackgroundWriter::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    not_empty_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop_ and nothing left
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    busy_ = true;
    lock.unlock();
    bool is_task = static_cast<bool>(job.task);
    Status st = is_task ? job.task() : WriteNpy(job.path, job.tensor);
    size_t bytes = is_task ? 0 : job.tensor.nbytes();
    std::string path = std::move(job.path);
    job = Job{};  // release the tensor's memory before taking the lock
    lock.lock();
    busy_ = false;
    queued_bytes_ -= bytes;
    if (st.ok()) {
      if (!is_task) ++written_;
    } else {
      if (errors_++ == 0) first_error_ = st;
      if (failures_.size() < kMaxFailuresKept) {
        failures_.push_back(Failure{std::move(path), st.message(), is_task});
      }
    }
    not_full_.notify_all();
    if (jobs_.empty()) idle_.notify_all();
  }
}

}  // namespace lockstep
