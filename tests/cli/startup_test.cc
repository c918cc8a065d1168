// `lockstep` starts without LibTorch: the commands that need it (audit, env
// capture) run in lockstep-torch, found beside `lockstep`; without it they
// fail with a message that says what is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "testing/run_lockstep.h"
#include "testing/test_dir.h"

namespace {

namespace fs = std::filesystem;
using lockstep::testing::CmdRun;
using lockstep::testing::RunCommand;

const std::string kBin = LOCKSTEP_BIN_DIR;

bool HaveHelper() { return fs::exists(kBin + "/lockstep-torch"); }

TEST(StartupTest, LockstepLinksNoLibTorch) {
  CmdRun ldd = RunCommand("ldd " + kBin + "/lockstep");
  if (ldd.code != 0) GTEST_SKIP() << "no ldd here: " << ldd.out;
  EXPECT_EQ(ldd.out.find("libtorch"), std::string::npos) << ldd.out;
  EXPECT_EQ(ldd.out.find("libc10"), std::string::npos) << ldd.out;
  EXPECT_NE(ldd.out.find("libc.so"), std::string::npos) << ldd.out;
}

TEST(StartupTest, TorchCommandsRunThroughTheHelper) {
  if (!HaveHelper()) GTEST_SKIP() << "built without LibTorch";
  CmdRun audit = RunCommand(kBin + "/lockstep audit --help");
  EXPECT_EQ(audit.code, 0) << audit.out;
  EXPECT_NE(audit.out.find("MPFR"), std::string::npos) << audit.out;
  CmdRun capture = RunCommand(kBin + "/lockstep env capture");
  EXPECT_EQ(capture.code, 0) << capture.out;
  EXPECT_NE(capture.out.find("\"lockstep_env\": 1"), std::string::npos);
  // Options and exit codes pass through unchanged.
  CmdRun bad = RunCommand(kBin + "/lockstep audit --dtype float64");
  EXPECT_EQ(bad.code, 2) << bad.out;
}

TEST(StartupTest, MissingHelperIsSaid) {
  std::string dir = lockstep::testing::FreshTestDir("lockstep_startup_");
  fs::copy_file(kBin + "/lockstep", dir + "lockstep");
  fs::permissions(dir + "lockstep", fs::perms::owner_all);
  for (const char* args : {"audit --help", "env capture"}) {
    CmdRun r = RunCommand(dir + "lockstep " + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find(HaveHelper() ? "lockstep-torch" : "LibTorch"),
              std::string::npos)
        << r.out;
  }
  // Commands without LibTorch do not need it.
  CmdRun help = RunCommand(dir + "lockstep --help");
  EXPECT_EQ(help.code, 0) << help.out;
  CmdRun rng = RunCommand(dir + "lockstep rng --seed 1 --count 2");
  EXPECT_EQ(rng.code, 0) << rng.out;
  fs::remove_all(dir);
}

}  // namespace
