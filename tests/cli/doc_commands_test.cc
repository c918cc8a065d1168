// Every `build/bin/...` command shown in README.md and docs/*.md (indented
// code lines) runs here, from the source directory, with its output
// directory (and any path under docs_out/) redirected to a temporary one. A
// command must exit 0 or 1 (1: it found a divergence, which the examples may
// show on purpose). Benchmarks
// (`*_bench`) run shortened: one repetition, a minimal time, a 64 MiB dump
// for the end-to-end one, and only their fp32 single-thread cases.
// The README's two setup commands (bash scripts/demo.sh, bash scripts/test.sh)
// are what CI itself runs; demo.sh's compare command is covered here.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Paths under docs_out/ (dumps, logs) and output options go to `tmp`.
std::string Redirected(std::string cmd, const std::string& tmp) {
  cmd = std::regex_replace(cmd, std::regex(R"((\s)docs_out/)"),
                           "$1" + tmp + "/docs_out/");
  return std::regex_replace(
      cmd, std::regex(R"((-o|--output|--json|--plot)\s+([^/\s]\S*))"),
      "$1 " + tmp + "/$2");
}

// The --dump directories of `file`'s Python commands, redirected to `tmp`.
std::vector<std::string> PythonDumps(const fs::path& file,
                                     const std::string& tmp) {
  std::ifstream in(file);
  std::vector<std::string> out;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("    /usr/bin/python3 ", 0) != 0) continue;
    std::string cmd = Redirected(line.substr(4), tmp);
    if (std::regex_search(cmd, m, std::regex(R"(--dump\s+(\S+))")))
      out.push_back(m[1].str());
  }
  return out;
}

std::vector<std::string> Commands(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    size_t p = line.find("build/bin/");
    if (line.rfind("    ", 0) == 0 && p != std::string::npos &&
        line.find_first_not_of(' ') == p) {
      out.push_back(line.substr(p));
    }
  }
  return out;
}

TEST(DocCommandsTest, EveryDocumentedCommandRuns) {
  fs::path src(LOCKSTEP_SOURCE_DIR);
  std::vector<fs::path> files = {src / "README.md"};
  for (const auto& e : fs::directory_iterator(src / "docs")) {
    if (e.path().extension() == ".md") files.push_back(e.path());
  }
  std::string tmp = ::testing::TempDir() + "lockstep_doc_cmds";
  int ran = 0;
  std::vector<std::string> not_written;  // dumps of commands not run
  for (const auto& f : files) {
    // What the file's Python commands write (run by the test below, with
    // the lockstep commands that read it).
    for (const std::string& py : PythonDumps(f, tmp)) {
      not_written.push_back(py);
    }
    for (std::string cmd : Commands(f)) {
      cmd = Redirected(cmd, tmp);
      std::string binary = cmd.substr(0, cmd.find(' '));
      bool needs_missing = false;  // reads what a command not run writes
      for (const std::string& out : not_written) {
        needs_missing = needs_missing || cmd.find(out) != std::string::npos;
      }
      // audit, replay and env capture run lockstep-torch, built only with
      // LibTorch.
      bool needs_torch = cmd.find("lockstep audit") != std::string::npos ||
                         cmd.find("lockstep replay") != std::string::npos ||
                         cmd.find("lockstep env capture") != std::string::npos;
      if (needs_torch &&
          !fs::exists(std::string(LOCKSTEP_BIN_DIR) + "/lockstep-torch"))
        needs_missing = true;
      if (needs_missing ||
          !fs::exists(std::string(LOCKSTEP_BIN_DIR) +
                      binary.substr(std::string("build/bin").size()))) {
        // Benchmarks are not built with -DLOCKSTEP_BUILD_BENCH=OFF, the
        // examples (lenet) not without LibTorch.
        std::printf("not built, not run: %s\n", cmd.c_str());
        std::smatch m;
        if (std::regex_search(cmd, m, std::regex(R"(--dump\s+(\S+))")))
          not_written.push_back(m[1].str());
        continue;
      }
      std::string env;
      if (cmd.find("_bench") != std::string::npos) {
        cmd +=
            " --benchmark_min_time=0.001 --benchmark_repetitions=1"
            " '--benchmark_filter=float32/threads:1|CompareEndToEnd|FileRead|"
            "LenetStep/mode:[02]/threads:1'";
        env = "LOCKSTEP_E2E_MIB=64 LOCKSTEP_E2E_DIR=" + tmp + "/e2e ";
      }
      std::string full =
          "cd " + src.string() + " && " + env + LOCKSTEP_BIN_DIR +
          cmd.substr(std::string("build/bin").size()) + " > /dev/null 2>&1";
      int status = std::system(full.c_str());
      int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      EXPECT_TRUE(code == 0 || code == 1)
          << f << ": " << cmd << " exited " << code;
      ++ran;
    }
  }
  EXPECT_GT(ran, 0);
  fs::remove_all(tmp);
}

// Python commands shown in the docs (`/usr/bin/python3 ...`, indented) run
// too, from the source directory: where Debian's python3-torch and the
// probe library are there (they are on the machines this project builds
// on). Benchmark scripts run shortened (--reps 1 --steps 3).
TEST(DocCommandsTest, EveryDocumentedPythonCommandRuns) {
  const std::string py = "/usr/bin/python3 ";
  if (std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no /usr/bin/python3 with torch";
  fs::path lib =
      fs::path(LOCKSTEP_BIN_DIR).parent_path() / "lib" / "liblockstep_py.so";
  if (!fs::exists(lib))
    GTEST_SKIP() << "the probe's Python library is not built";
  // The commands load this build's library: lockstep_probe looks in the
  // source tree's build/lib/ otherwise (absent beside build-asan/).
  ::setenv("LOCKSTEP_PY_LIB", lib.c_str(), 1);
  fs::path src(LOCKSTEP_SOURCE_DIR);
  std::vector<fs::path> files = {src / "README.md"};
  for (const auto& e : fs::directory_iterator(src / "docs")) {
    if (e.path().extension() == ".md") files.push_back(e.path());
  }
  std::string tmp = ::testing::TempDir() + "lockstep_doc_py";
  fs::remove_all(tmp);
  int ran = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string line;
    std::vector<std::string> written;  // --dump of the Python commands run
    while (std::getline(in, line)) {
      bool python = line.rfind("    " + py, 0) == 0;
      std::string cmd =
          Redirected(line.substr(std::min<size_t>(4, line.size())), tmp);
      if (!python) {
        // A lockstep command reading what a Python command above wrote
        // runs here (the test above leaves it out).
        bool reads = false;
        for (const std::string& w : written)
          reads = reads || cmd.find(w) != std::string::npos;
        if (line.rfind("    build/bin/", 0) != 0 || !reads) continue;
        std::string full = "cd " + src.string() + " && " + LOCKSTEP_BIN_DIR +
                           cmd.substr(std::string("build/bin").size()) +
                           " 2>&1";
        int status = std::system((full + " > /dev/null").c_str());
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) <= 1)
            << f << ": " << cmd;
        ++ran;
        continue;
      }
      std::smatch m;
      if (std::regex_search(cmd, m, std::regex(R"(--dump\s+(\S+))")))
        written.push_back(m[1].str());
      if (cmd.find("bench/") != std::string::npos) {
        cmd =
            std::regex_replace(cmd, std::regex(R"(--reps\s+\d+)"), "--reps 1");
        cmd = std::regex_replace(cmd, std::regex(R"(--steps\s+\d+)"),
                                 "--steps 3");
      }
      std::string full = "cd " + src.string() + " && " + cmd + " 2>&1";
      FILE* p = popen(full.c_str(), "r");
      ASSERT_NE(p, nullptr);
      std::string out;
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
      int status = pclose(p);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << f << ": " << cmd << "\n"
          << out;
      ++ran;
    }
  }
  EXPECT_GT(ran, 0);
  fs::remove_all(tmp);
}

}  // namespace
