// Headless Chromium for the HTML report's tests: starts it on a page with
// --dump-dom (the DOM after the load event, once the page's script ran),
// with its own profile and HOME, waits with a deadline, and reads the DOM
// and the page's console messages back; plus helpers to pick the DOM apart.
#ifndef LOCKSTEP_TESTS_REPORT_CHROMIUM_PAGE_H_
#define LOCKSTEP_TESTS_REPORT_CHROMIUM_PAGE_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lockstep/core/file.h"

extern char** environ;

namespace lockstep::testing {

namespace fs = std::filesystem;

inline constexpr char kChromium[] = "/usr/bin/chromium";

// How long a page may take to load before its browser is killed: a bound
// for a hung browser, not a speed check. Loads take 2 to 60 s alone on two
// cores and several times that beside a parallel build or test (the 120 s
// of the deep tree page ran out in CI with another test beside it).
inline constexpr std::chrono::seconds kPageDeadline{300};

struct PageRun {
  std::string url;
  std::vector<std::string> args;  // more command-line flags
  pid_t pid = -1;
  int status = -1;
  std::string dom;  // what --dump-dom printed
  std::string log;  // Chromium's stderr, with the page's console messages
  std::chrono::steady_clock::time_point started;
  double seconds = 0;  // from the start to the exit (or the kill)
};

// The command line: --dump-dom prints the DOM after the load event, and
// --enable-logging=stderr puts the page's console messages in the log.
// `extra` (a window size, --force-dark-mode) goes before the URL.
inline std::vector<std::string> BrowserArgs(
    const std::string& profile, const std::string& url,
    const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {kChromium,
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + profile,
                                   "--enable-logging=stderr",
                                   "--v=0",
                                   "--dump-dom"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(url);
  return args;
}

// This process's environment with HOME moved to `home`.
inline std::vector<std::string> EnvironmentWithHome(const fs::path& home) {
  std::vector<std::string> env = {"HOME=" + home.string()};
  for (char** e = environ; *e; ++e) {
    if (std::string_view(*e).rfind("HOME=", 0) != 0) env.push_back(*e);
  }
  return env;
}

// argv/envp style: pointers into `strings`, then nullptr.
inline std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts Chromium on run->url in its own process group, with its own profile
// and HOME under `dir`; stdout and stderr go to files there.
inline void Start(const fs::path& dir, int n, PageRun* run) {
  std::string out = (dir / ("dom" + std::to_string(n))).string();
  std::string err = (dir / ("log" + std::to_string(n))).string();
  std::vector<std::string> args = BrowserArgs(
      (dir / ("profile" + std::to_string(n))).string(), run->url, run->args);
  std::vector<std::string> env = EnvironmentWithHome(dir);
  std::vector<char*> argv = CStrings(args), envp = CStrings(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  run->started = std::chrono::steady_clock::now();
  if (posix_spawn(&run->pid, kChromium, &actions, &attr, argv.data(),
                  envp.data()) != 0) {
    run->pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
}

// Waits for every run (killing the process group of any that overstays),
// then reads its output.
inline void WaitAll(const fs::path& dir, std::vector<PageRun>* runs,
                    std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (size_t n = 0; n < runs->size(); ++n) {
    PageRun& run = (*runs)[n];
    if (run.pid <= 0) continue;  // not started
    while (run.pid > 0 && waitpid(run.pid, &run.status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(-run.pid, SIGKILL);
        waitpid(run.pid, &run.status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    run.seconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - run.started)
                      .count();
    if (run.pid > 0)
      kill(-run.pid, SIGKILL);  // helpers left in its group, if any
    auto dom = ReadFileToString((dir / ("dom" + std::to_string(n))).string());
    auto log = ReadFileToString((dir / ("log" + std::to_string(n))).string());
    run.dom = dom.ok() ? *dom : "";
    run.log = log.ok() ? *log : "";
  }
}

// The page's console output and uncaught exceptions, one per line, from
// Chromium's log (lines like `INFO:CONSOLE:12] "Uncaught ...", source: ...`).
inline std::vector<std::string> ConsoleMessages(const std::string& log) {
  static const std::regex kConsole(R"(:CONSOLE[:(]|Uncaught)");
  std::vector<std::string> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, kConsole)) out.push_back(line);
  }
  return out;
}

// The text of the element with `id` (from its opening tag to the next '<').
inline std::string TextOf(const std::string& dom, const std::string& id) {
  size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "<missing #" + id + ">";
  at = dom.find('>', at) + 1;
  return dom.substr(at, dom.find('<', at) - at);
}

// The HTML between the opening tag of `#id` and the first `close` after it.
inline std::string Inside(const std::string& dom, const std::string& id,
                          const std::string& close) {
  size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return dom.substr(at, dom.find(close, at) - at);
}

inline size_t CountOf(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos;
       at = s.find(what, at + 1))
    ++n;
  return n;
}

// The data-i of each table row, in order.
inline std::vector<int> RowIndices(const std::string& dom) {
  std::vector<int> out;
  std::string body = Inside(dom, "rows", "</tbody>");
  static const std::regex kRow(R"re(<tr class="([^"]*)" data-i="(\d+)")re");
  for (std::sregex_iterator it(body.begin(), body.end(), kRow), end; it != end;
       ++it) {
    out.push_back(std::stoi((*it)[2]));
  }
  return out;
}

inline std::string Describe(const PageRun& run) {
  return run.url + " (exit status " + std::to_string(run.status) +
         ")\n--- log tail ---\n" +
         run.log.substr(run.log.size() > 3000 ? run.log.size() - 3000 : 0);
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_REPORT_CHROMIUM_PAGE_H_
