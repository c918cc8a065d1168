#include "torch/replay_worker.h"

#include <ATen/Parallel.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "lockstep/core/parallel.h"
#include "lockstep/numerics/replay_error.h"

namespace lockstep {
namespace {

using Clock = std::chrono::steady_clock;

// ---- The checks as bytes: int64 and double little-endian as in memory
// (the same machine reads them), strings with their length first. ----

void PutI(std::string* s, int64_t v) {
  s->append(reinterpret_cast<const char*>(&v), sizeof v);
}
void PutD(std::string* s, double v) {
  s->append(reinterpret_cast<const char*>(&v), sizeof v);
}
void PutS(std::string* s, const std::string& v) {
  PutI(s, static_cast<int64_t>(v.size()));
  s->append(v);
}

class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  bool I(int64_t* v) { return Raw(v, sizeof *v); }
  bool D(double* v) { return Raw(v, sizeof *v); }
  bool S(std::string* v) {
    int64_t n = 0;
    if (!I(&n) || n < 0 || static_cast<uint64_t>(n) > b_.size()) return false;
    v->assign(b_.substr(0, static_cast<size_t>(n)));
    b_.remove_prefix(static_cast<size_t>(n));
    return true;
  }
  bool done() const { return b_.empty(); }

 private:
  bool Raw(void* v, size_t n) {
    if (b_.size() < n) return false;
    std::memcpy(v, b_.data(), n);
    b_.remove_prefix(n);
    return true;
  }
  std::string_view b_;
};

// ---- The child: a frame per entry started ('S') and ended ('D'). ----

constexpr size_t kHeader = 1 + 8 + 8;  // type, entry, payload length

bool WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    off += static_cast<size_t>(w);
  }
  return true;
}

std::vector<ReplayCheck> Refusal(std::string reason) {
  ReplayCheck c;
  c.verdict = ReplayVerdict::kNotReplayable;
  c.reason = std::move(reason);
  return {std::move(c)};
}

[[noreturn]] void ChildMain(
    int fd, pid_t parent, const std::vector<size_t>& todo, int jobs,
    const std::function<std::vector<ReplayCheck>(size_t)>& replay) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  std::mutex mu;
  auto send = [&](char type, size_t i, const std::string& payload) {
    std::string frame(1, type);
    PutI(&frame, static_cast<int64_t>(i));
    PutI(&frame, static_cast<int64_t>(payload.size()));
    frame += payload;
    std::lock_guard<std::mutex> lock(mu);
    if (!WriteAll(fd, frame)) ::_exit(3);
  };
  // On a fresh thread: the forking thread's OpenMP pool does not survive
  // fork (GNU libgomp would wait for its threads forever).
  std::thread work([&] {
    // LibTorch rebuilds its thread pool after fork on first use, racily:
    // use it once from one thread before the entries' threads start.
    at::set_num_threads(at::get_num_threads());
    ParallelFor(todo.size(), jobs, [&](size_t k) {
      send('S', todo[k], "");
      std::vector<ReplayCheck> checks;
      try {
        checks = replay(todo[k]);
      } catch (const std::exception& e) {
        checks = Refusal(std::string("the replay threw: ") + e.what());
      } catch (...) {
        checks = Refusal("the replay threw an unknown exception");
      }
      send('D', todo[k], EncodeReplayChecks(checks));
    });
  });
  work.join();
  ::_exit(0);
}

// ---- The parent: one child's run. ----

struct ChildRun {
  std::map<size_t, Clock::time_point> in_flight;  // started, not ended
  std::optional<size_t> timed_out;                // killed for this entry
  int status = 0;                                 // waitpid's
  bool decode_error = false;
};

std::string DiedReason(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "the replayed call killed its process (signal " +
           std::to_string(sig) + ", " + strsignal(sig) +
           "; the kernel's OOM killer sends 9)";
  }
  return "the replay process ended (status " +
         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
         ") while replaying it";
}

// The entry in flight longest, if it has run `limit` or more.
std::optional<size_t> Overdue(const ChildRun& run, Clock::duration limit,
                              Clock::duration* wait) {
  *wait = Clock::duration::max();
  if (run.in_flight.empty()) return std::nullopt;
  auto first = std::min_element(
      run.in_flight.begin(), run.in_flight.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  *wait = first->second + limit - Clock::now();
  if (*wait <= Clock::duration::zero()) return first->first;
  return std::nullopt;
}

// Takes the whole frames off the front of `buf`; false on a frame that
// makes no sense (the child is then killed).
bool TakeFrames(std::string* buf, const std::function<void(size_t)>& on_done,
                std::vector<std::vector<ReplayCheck>>* out,
                std::vector<bool>* finished, ChildRun* run) {
  while (buf->size() >= kHeader) {
    int64_t index = 0, len = 0;
    std::memcpy(&index, buf->data() + 1, 8);
    std::memcpy(&len, buf->data() + 9, 8);
    if (index < 0 || static_cast<size_t>(index) >= finished->size() ||
        len < 0) {
      return false;
    }
    if (buf->size() - kHeader < static_cast<size_t>(len)) return true;
    auto i = static_cast<size_t>(index);
    if ((*buf)[0] == 'S') {
      run->in_flight[i] = Clock::now();
    } else {
      std::vector<ReplayCheck> checks;
      if (!DecodeReplayChecks(
              std::string_view(*buf).substr(kHeader, static_cast<size_t>(len)),
              &checks)) {
        checks = Refusal("the replay process sent an unreadable result");
      }
      (*out)[i] = std::move(checks);
      (*finished)[i] = true;
      run->in_flight.erase(i);
      if (on_done) on_done(i);
    }
    buf->erase(0, kHeader + static_cast<size_t>(len));
  }
  return true;
}

// Reads the child's frames until it ends or an entry passes `max_seconds`
// (then kills it).
void Watch(int fd, pid_t pid, double max_seconds,
           const std::function<void(size_t)>& on_done,
           std::vector<std::vector<ReplayCheck>>* out,
           std::vector<bool>* finished, ChildRun* run) {
  auto limit = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(max_seconds));
  std::string buf;
  char tmp[1 << 16];
  for (;;) {
    Clock::duration wait;
    run->timed_out = Overdue(*run, limit, &wait);
    if (run->timed_out) {
      ::kill(pid, SIGKILL);
      break;
    }
    int timeout_ms =
        wait == Clock::duration::max()
            ? -1
            : static_cast<int>(std::min<int64_t>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(wait)
                          .count() +
                      1,
                  int64_t{1} << 30));
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, timeout_ms);
    if (r == 0 || (r < 0 && errno == EINTR)) continue;
    ssize_t got = r < 0 ? -1 : ::read(fd, tmp, sizeof tmp);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // the child ended
    buf.append(tmp, static_cast<size_t>(got));
    if (!TakeFrames(&buf, on_done, out, finished, run)) {
      run->decode_error = true;
      ::kill(pid, SIGKILL);
      break;
    }
  }
  while (::waitpid(pid, &run->status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::string EncodeReplayChecks(const std::vector<ReplayCheck>& checks) {
  std::string s;
  PutI(&s, static_cast<int64_t>(checks.size()));
  for (const ReplayCheck& c : checks) {
    PutI(&s, c.step);
    PutI(&s, c.rank);
    for (const std::string* t : {&c.entry, &c.tensor, &c.op, &c.dtype, &c.kind,
                                 &c.bound_rule, &c.reason}) {
      PutS(&s, *t);
    }
    for (double d :
         {c.max_ulp, c.max_rel, c.cpu_ulp, c.bound, c.recorded, c.reference}) {
      PutD(&s, d);
    }
    PutI(&s, c.worst_index);
    PutI(&s, static_cast<int64_t>(c.verdict));
  }
  return s;
}

bool DecodeReplayChecks(std::string_view bytes,
                        std::vector<ReplayCheck>* checks) {
  Reader r(bytes);
  int64_t n = 0;
  if (!r.I(&n) || n < 0 || static_cast<uint64_t>(n) > bytes.size()) {
    return false;
  }
  checks->clear();
  for (int64_t k = 0; k < n; ++k) {
    ReplayCheck c;
    int64_t verdict = 0;
    bool ok = r.I(&c.step) && r.I(&c.rank);
    for (std::string* t : {&c.entry, &c.tensor, &c.op, &c.dtype, &c.kind,
                           &c.bound_rule, &c.reason}) {
      ok = ok && r.S(t);
    }
    for (double* d : {&c.max_ulp, &c.max_rel, &c.cpu_ulp, &c.bound, &c.recorded,
                      &c.reference}) {
      ok = ok && r.D(d);
    }
    ok = ok && r.I(&c.worst_index) && r.I(&verdict) && verdict >= 0 &&
         verdict <= static_cast<int64_t>(ReplayVerdict::kSkipped);
    if (!ok) return false;
    c.verdict = static_cast<ReplayVerdict>(verdict);
    checks->push_back(std::move(c));
  }
  return r.done();
}

namespace {

// Starts a child replaying `todo`; the read end of its pipe in *fd.
Status StartChild(const std::vector<size_t>& todo, int jobs,
                  const std::function<std::vector<ReplayCheck>(size_t)>& replay,
                  pid_t* pid, int* fd) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Status::IoError(
        "replay", std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t parent = ::getpid();
  *pid = ::fork();
  if (*pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Status::IoError("replay", std::string("cannot start a process: ") +
                                         std::strerror(errno));
  }
  if (*pid == 0) {
    ::close(fds[0]);
    ChildMain(fds[1], parent, todo, jobs, replay);
  }
  ::close(fds[1]);
  *fd = fds[0];
  return Status::Ok();
}

}  // namespace

Status ReplayEntriesIsolated(
    size_t n, int jobs, double max_seconds,
    const std::function<std::vector<ReplayCheck>(size_t)>& replay,
    const std::function<void(size_t)>& on_done,
    std::vector<std::vector<ReplayCheck>>* out) {
  out->assign(n, {});
  std::vector<bool> finished(n, false);
  std::vector<size_t> pending(n);
  for (size_t i = 0; i < n; ++i) pending[i] = i;
  auto settle = [&](size_t i, std::string reason) {
    (*out)[i] = Refusal(std::move(reason));
    finished[i] = true;
    if (on_done) on_done(i);
  };
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", max_seconds);
  while (!pending.empty()) {
    pid_t pid = 0;
    int fd = -1;
    if (Status s = StartChild(pending, jobs, replay, &pid, &fd); !s.ok()) {
      return s;
    }
    ChildRun run;
    Watch(fd, pid, max_seconds, on_done, out, &finished, &run);
    ::close(fd);
    if (run.timed_out) {
      settle(*run.timed_out,
             std::string("refused: its replay ran past the time limit of ") +
                 limit + " s a call and was stopped (--max-call-seconds)");
      run.in_flight.erase(*run.timed_out);
    } else if (run.in_flight.size() == 1) {
      settle(run.in_flight.begin()->first, DiedReason(run.status));
      run.in_flight.clear();
    } else if (run.in_flight.size() > 1) {
      jobs = 1;  // the next child runs them one at a time, to find which
    }
    std::vector<size_t> left;
    for (size_t i : pending) {
      if (!finished[i]) left.push_back(i);
    }
    if (left.size() == pending.size() && run.in_flight.empty()) {
      // The child ended before it started anything: do not loop.
      for (size_t i : left) settle(i, DiedReason(run.status));
      left.clear();
    }
    pending = std::move(left);
  }
  return Status::Ok();
}

}  // namespace lockstep
