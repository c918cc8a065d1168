#include "lockstep/core/progress.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lockstep/core/log.h"

namespace lockstep {
namespace {

std::string ClockText(double seconds) {
  long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60,
                  s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  }
  return buf;
}

}  // namespace

std::string FormatProgress(size_t done, size_t total, double elapsed_s,
                           const std::string& unit, int width) {
  if (done > total) done = total;
  double frac = total == 0 ? 1.0 : static_cast<double>(done) / total;
  int full = static_cast<int>(frac * width);
  std::string out;
  if (width > 0) {
    out = "[" + std::string(static_cast<size_t>(full), '#') +
          std::string(static_cast<size_t>(width - full), '.') + "] ";
  }
  out += std::to_string(done) + "/" + std::to_string(total) + " " + unit + " " +
         std::to_string(static_cast<int>(frac * 100)) + "%";
  if (done < total) {
    out += " ETA ";
    out += done == 0 ? "?" : ClockText(elapsed_s / frac - elapsed_s);
  }
  return out;
}

Progress::Progress(std::string what, std::string unit)
    : what_(std::move(what)), unit_(std::move(unit)) {
  terminal_ = StderrIsTerminal();
  enabled_ = GetLogLevel() <= LogLevel::kInfo;
  start_ = last_ = Clock::now();
}

Progress::~Progress() {
  if (drawn_ && terminal_) std::fputc('\n', stderr);
}

void Progress::Update(size_t done, size_t total) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  Clock::time_point now = Clock::now();
  if (!started_) {  // the work's clock starts at its first report
    started_ = true;
    start_ = last_ = now;
  }
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double since = std::chrono::duration<double>(now - last_).count();
  bool end = done >= total;
  if (terminal_) {
    if (end && ended_) return;  // the finished bar is on its own line
    ended_ = end;
    if (!end && drawn_ && since < 0.1) return;
    // \x1b[K clears what a longer earlier line left on the right. The
    // finished bar ends its line, so that what is printed next (warnings, a
    // next bar) starts on a line of its own.
    std::fprintf(stderr, "\r[I] %s %s\x1b[K%s", what_.c_str(),
                 FormatProgress(done, total, elapsed, unit_).c_str(),
                 end ? "\n" : "");
    std::fflush(stderr);
    drawn_ = !end;
  } else {
    // Lines only for long work: first after 5 s, then every 10 s.
    if (end || elapsed < 5 || (drawn_ && since < 10)) return;
    std::fprintf(stderr, "[I] %s %s\n", what_.c_str(),
                 FormatProgress(done, total, elapsed, unit_, 0).c_str());
    drawn_ = true;
  }
  last_ = now;
}

void TimingMark(const char* what) {
  static const bool on = std::getenv("LOCKSTEP_TIMING") != nullptr;
  if (!on) return;
  static std::mutex mu;
  static std::chrono::steady_clock::time_point last =
      std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu);
  auto now = std::chrono::steady_clock::now();
  // Resident memory now and at its peak (VmRSS, VmHWM), for where the
  // memory goes as well as the time.
  long rss_kb = -1, hwm_kb = -1;
  if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof(line), f) != nullptr) {
      std::sscanf(line, "VmRSS: %ld", &rss_kb);
      std::sscanf(line, "VmHWM: %ld", &hwm_kb);
    }
    std::fclose(f);
  }
  std::fprintf(stderr, "[timing] %s %.3f s (rss %ld MB, peak %ld MB)\n", what,
               std::chrono::duration<double>(now - last).count(), rss_kb / 1024,
               hwm_kb / 1024);
  last = now;
}

}  // namespace lockstep
