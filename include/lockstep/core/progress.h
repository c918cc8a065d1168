// Progress of long work on stderr: on a terminal, a bar redrawn in place
// ("[I] compare [######......] 1204/4000 rows 30% ETA 0:12"), at most 10
// times a second; otherwise (a log file, CI) a plain line once the work has
// run 5 s and then every 10 s, so that short runs print nothing extra.
// Silent below LogLevel::kInfo (--quiet).
// Thread safety: Update may be called from any thread (serialised inside).
#ifndef LOCKSTEP_CORE_PROGRESS_H_
#define LOCKSTEP_CORE_PROGRESS_H_

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace lockstep {

// "[######......] 1204/4000 rows 30% ETA 0:12" for `width` bar cells (no
// bar for 0), after `elapsed_s` seconds ("ETA ?" before any progress; no
// ETA when done).
std::string FormatProgress(size_t done, size_t total, double elapsed_s,
                           const std::string& unit, int width = 24);

class Progress {
 public:
  // `what` names the work ("compare"), `unit` what is counted ("rows").
  Progress(std::string what, std::string unit);
  ~Progress();  // ends the bar's line on a terminal
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` units are done. The elapsed time (and so the ETA and
  // the 5 s before a first plain line) counts from the first Update, so a
  // Progress may be made before other work runs.
  void Update(size_t done, size_t total);

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex mu_;
  std::string what_, unit_;
  bool terminal_ = false, enabled_ = false, drawn_ = false, started_ = false;
  bool ended_ = false;  // the last drawing on a terminal was the finished bar
  Clock::time_point start_, last_;
};

// Where long work spends its time: with LOCKSTEP_TIMING set in the
// environment, each call prints "[timing] <what> 1.234 s" to stderr, the
// wall time since the previous call in the process (the first counts from
// its own call: print "start" first). Costs a branch otherwise.
//   LOCKSTEP_TIMING=1 lockstep compare a b -o out
void TimingMark(const char* what);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_PROGRESS_H_
