// Symbolic links and FIFOs planted at every path compare and inspect read
// inside a dump (dump.json, stack.json, construct.json, env.json, a step
// directory; tensor files are hostile_paths_test's): nothing is read
// through a link or from a FIFO, nothing blocks, and a dump.json that is
// refused never passes. Each command runs under `timeout 60`: exit 124 is a
// hang. (Written outputs: output_dir_test; the probe's directories:
// probe_faults_test.)
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "testing/run_lockstep.h"
#include "testing/test_dir.h"

namespace {

namespace fs = std::filesystem;

const std::string kToy = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy";

using CmdOut = lockstep::testing::CmdRun;

CmdOut Lockstep(const std::string& args) {
  return lockstep::testing::RunCommand("timeout 60 " +
                                       std::string(LOCKSTEP_BIN_DIR) +
                                       "/lockstep " + args);
}

class PlantedLinksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
    dir_ = lockstep::testing::FreshTestDir("lockstep_planted_");
    for (const auto& e : fs::recursive_directory_iterator(kToy + "/dumpA"))
      if (e.path().filename() == "dump.json") rank_ = e.path().parent_path();
    fs::create_directories(dir_ + "outside");
    ASSERT_EQ(::mkfifo((dir_ + "outside/fifo").c_str(), 0600), 0);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // A copy of the toy rank directory at `to`.
  void CopyRank(const std::string& to) {
    fs::create_directories(fs::path(to).parent_path());
    fs::copy(rank_, to, fs::copy_options::recursive);
  }
  // Replaces `path` by a symbolic link to `target`.
  void Plant(const std::string& path, const std::string& target) {
    fs::remove_all(path);
    fs::create_symlink(target, path);
  }
  std::string dir_;
  fs::path rank_;
};

TEST_F(PlantedLinksTest, DumpJsonLinkIsNotReadAndNeverPasses) {
  CopyRank(dir_ + "t");
  CopyRank(dir_ + "b");
  // Followed, the link would read a copy of the baseline and pass.
  fs::copy(dir_ + "b/dump.json", dir_ + "outside/dump.json");
  Plant(dir_ + "t/dump.json", dir_ + "outside/dump.json");
  for (const char* cmd : {"compare", "inspect"}) {
    CmdOut r =
        Lockstep(std::string(cmd) + " " + dir_ + "t" +
                 (cmd[0] == 'c' ? " " + dir_ + "b -o " + dir_ + "out" : ""));
    EXPECT_NE(r.code, 124) << cmd << " hung";
    EXPECT_NE(r.code, 0) << cmd << ": " << r.out;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  }
}

TEST_F(PlantedLinksTest, DumpJsonFifoNeverBlocks) {
  CopyRank(dir_ + "t");
  CopyRank(dir_ + "b");
  fs::remove(dir_ + "t/dump.json");
  ASSERT_EQ(::mkfifo((dir_ + "t/dump.json").c_str(), 0600), 0);
  CmdOut r = Lockstep("compare " + dir_ + "t " + dir_ + "b -o " + dir_ + "out");
  EXPECT_NE(r.code, 124) << "compare hung on a FIFO";
  EXPECT_NE(r.code, 0) << r.out;
}

// stack.json, construct.json and env.json only add to a compare: links to
// a FIFO outside (and an env.json that is a FIFO) are left unread, and the
// compare of the intact data still passes, saying the environment check
// was skipped.
TEST_F(PlantedLinksTest, SideFilesLinkedToAFifoAreNotRead) {
  CopyRank(dir_ + "t");
  CopyRank(dir_ + "b");
  Plant(dir_ + "t/stack.json", dir_ + "outside/fifo");
  Plant(dir_ + "t/construct.json", dir_ + "outside/fifo");
  Plant(dir_ + "t/env.json", dir_ + "outside/fifo");
  ASSERT_EQ(::mkfifo((dir_ + "b/env.json").c_str(), 0600), 0);
  CmdOut r = Lockstep("compare " + dir_ + "t " + dir_ + "b -o " + dir_ + "out");
  EXPECT_NE(r.code, 124) << "compare hung on a FIFO";
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("environment check skipped"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("refused"), std::string::npos) << r.out;
  CmdOut i = Lockstep("inspect " + dir_ + "t");
  EXPECT_NE(i.code, 124) << "inspect hung on a FIFO";
  EXPECT_EQ(i.code, 0) << i.out;
}

// A step directory that is a link to another dump is not part of this one.
TEST_F(PlantedLinksTest, StepDirectoryLinkIsNotFollowed) {
  for (const char* side : {"t", "b"}) {
    for (int step : {0, 1})
      CopyRank(dir_ + side + "/step" + std::to_string(step) + "/rank0");
  }
  CopyRank(dir_ + "outside/step1/rank0");
  Plant(dir_ + "t/step1", dir_ + "outside/step1");
  CmdOut r = Lockstep("compare " + dir_ + "t " + dir_ + "b -o " + dir_ + "out");
  EXPECT_NE(r.code, 124);
  EXPECT_EQ(r.code, 1) << r.out;  // the target lacks step 1: a failure
  EXPECT_NE(r.out.find("step 1"), std::string::npos) << r.out;
}

}  // namespace
