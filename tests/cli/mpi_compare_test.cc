// `mpirun -n P lockstep compare` (lockstep-mpi, real Open MPI processes)
// writes the same files, byte for byte, and exits with the same code and
// errors as one process. CSV names hold the time of the run
// (compare_result_rank0_<YYYYmmddHHMMSS>.csv): the names are compared with
// those 14 digits masked; nothing inside any file holds a time, a pid or
// the output path. Skipped where mpirun or lockstep-mpi is absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "testing/rank_dumps.h"
#include "testing/run_lockstep.h"
#include "testing/same_bytes.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::Phase;
using testing::RankProgram;

bool HaveMpi() {
  return testing::RunCommand("command -v mpirun").code == 0 &&
         fs::exists(std::string(LOCKSTEP_BIN_DIR) + "/lockstep-mpi");
}

#define SKIP_WITHOUT_MPI()                                               \
  if (!HaveMpi())                                                        \
  GTEST_SKIP() << "mpirun or build/bin/lockstep-mpi not found (apt-get " \
                  "install openmpi-bin libopenmpi-dev, then rebuild)"

std::string Mpirun(int processes) {
  std::string root = ::geteuid() == 0 ? " --allow-run-as-root" : "";
  return "mpirun" + root + " --oversubscribe -n " + std::to_string(processes) +
         " ";
}

// The files of `dir` by name, the CSV names' time masked.
std::map<std::string, std::string> Files(const std::string& dir) {
  static const std::regex kTime("_[0-9]{14}\\.csv$");
  std::map<std::string, std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name =
        std::regex_replace(e.path().filename().string(), kTime, "_<time>.csv");
    files[name] = testing::Slurp(e.path());
  }
  return files;
}

// lockstep's own lines ([I] [W] [E] [D], the verdict), the output dir
// masked: mpirun adds its own lines when the exit code is not 0, and Open
// MPI's components may warn on a loaded machine. The lines of stdout ([I],
// the verdict) come first and those of stderr ([W], [E]) after them, each
// stream in its order: mpirun forwards the two streams separately, so
// their lines interleave as they arrive.
std::string OwnLines(const std::string& out, const std::string& out_dir) {
  static const std::regex kTime("_[0-9]{14}\\.csv");
  std::string kept, kept_err, line;
  std::istringstream in(out);
  while (std::getline(in, line)) {
    // Only lockstep's prefixes: Open MPI and libevent write lines that
    // start with "[" too ("[host:pid] ...", "[warn] Epoll ...").
    bool own = false;
    for (const char* prefix : {"[I] ", "[W] ", "[E] ", "[D] ", "PASS", "FAIL"})
      own = own || line.rfind(prefix, 0) == 0;
    if (!own) continue;
    for (size_t at; (at = line.find(out_dir)) != std::string::npos;)
      line.replace(at, out_dir.size(), "OUT");
    bool err = line.rfind("[W] ", 0) == 0 || line.rfind("[E] ", 0) == 0;
    (err ? kept_err : kept) +=
        std::regex_replace(line, kTime, "_<time>.csv") + "\n";
  }
  return kept + kept_err;
}

// Runs the compare alone and with each process count; every run's exit
// code, lines and files are the single run's.
void ExpectSameAsOneProcess(const std::string& dir, std::vector<int> counts,
                            const std::string& extra = "") {
  std::string args = "compare " + dir + "target " + dir + "baseline" + extra;
  testing::CmdRun one = testing::RunLockstep(args + " -o " + dir + "one");
  ASSERT_FALSE(one.out.empty());
  for (int p : counts) {
    SCOPED_TRACE("mpirun -n " + std::to_string(p));
    std::string out = dir + "mpi" + std::to_string(p);
    testing::CmdRun r = testing::RunCommand(Mpirun(p) + LOCKSTEP_BIN_DIR +
                                            "/lockstep " + args + " -o " + out);
    EXPECT_EQ(r.code, one.code) << r.out;
    EXPECT_TRUE(testing::SameBytes(OwnLines(r.out, out),
                                   OwnLines(one.out, dir + "one")));
    if (!fs::exists(dir + "one")) {
      EXPECT_FALSE(fs::exists(out));
      continue;
    }
    std::map<std::string, std::string> want = Files(dir + "one"),
                                       got = Files(out);
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [name, bytes] : want) {
      SCOPED_TRACE(name);
      ASSERT_EQ(got.count(name), 1u);
      EXPECT_TRUE(testing::SameBytes(got[name], bytes));
    }
  }
}

RankProgram DataParallel(int ranks, int fault_rank) {
  return testing::DataParallelProgram(ranks, fault_rank);
}

std::string Written(const RankProgram& p) {
  std::string dir = testing::FreshTestDir("mpi_compare_");
  testing::WriteRankDumps(p, dir);
  return dir;
}

TEST(MpiCompareTest, TwoProcessesWriteTheSameFiles) {
  SKIP_WITHOUT_MPI();
  ExpectSameAsOneProcess(Written(DataParallel(8, 5)), {2});
}

TEST(MpiCompareTest, ThreeProcessesForTwoRanks) {
  SKIP_WITHOUT_MPI();  // process 2 has no pair to compare
  ExpectSameAsOneProcess(Written(DataParallel(2, 1)), {3});
}

TEST(MpiCompareTest, PassingRunExitsZeroEverywhere) {
  SKIP_WITHOUT_MPI();
  ExpectSameAsOneProcess(Written(DataParallel(4, -1)), {2});
}

TEST(MpiCompareTest, RankDirMissingInOneShare) {
  SKIP_WITHOUT_MPI();
  std::string dir = Written(DataParallel(8, 5));
  fs::remove_all(dir + "target/step0/rank6");  // process 1's share
  ExpectSameAsOneProcess(dir, {2});
}

TEST(MpiCompareTest, UnreadableDumpJsonInOneShare) {
  SKIP_WITHOUT_MPI();
  std::string dir = Written(DataParallel(8, 5));
  std::ofstream(dir + "baseline/step0/rank5/dump.json") << "{\"data\": [";
  ExpectSameAsOneProcess(dir, {2});
}

TEST(MpiCompareTest, EmptyDumpInOneShareIsTheSameError) {
  SKIP_WITHOUT_MPI();
  std::string dir = Written(DataParallel(8, 5));
  std::ofstream(dir + "target/step0/rank7/dump.json")
      << "{\"task\": \"statistics\", \"level\": \"L1\", \"data\": {}}";
  ExpectSameAsOneProcess(dir, {2});
}

TEST(MpiCompareTest, UsageAndMissingPathErrors) {
  SKIP_WITHOUT_MPI();
  std::string dir = testing::FreshTestDir("mpi_compare_");
  ExpectSameAsOneProcess(dir, {2});  // no target: NotFound, exit 3
  ExpectSameAsOneProcess(Written(DataParallel(2, -1)), {2}, " --mode bogus");
}

}  // namespace
}  // namespace lockstep
