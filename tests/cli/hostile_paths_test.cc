// Reading only what belongs to the dump: a tensor's data_name or a file
// planted in dump_tensor_data must never make compare read outside the
// dump, block, or exhaust memory; each refused file is an error row that
// names it, and the compare fails.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "testing/run_lockstep.h"
#include "testing/test_dir.h"

namespace {

namespace fs = std::filesystem;
using lockstep::testing::CmdRun;
using lockstep::testing::Slurp;

const std::string kToy = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy";
const std::string kVictim = "Functional.linear.0.forward.input.0.pt";

class HostilePathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
    dir_ = lockstep::testing::FreshTestDir("lockstep_hostile_");
    for (const auto& e : fs::recursive_directory_iterator(kToy + "/dumpA")) {
      if (e.path().filename() == "dump.json") base_ = e.path().parent_path();
    }
    fs::copy(base_, dir_ + "t", fs::copy_options::recursive);
    fs::copy(base_, dir_ + "b", fs::copy_options::recursive);
    // The victim tensor, moved outside the dump: read through any planted
    // path, it would compare equal and pass.
    fs::rename(dir_ + "t/dump_tensor_data/" + kVictim, dir_ + "outside.pt");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // Both dumps' dump.json with the victim's data_name replaced (msprobe
  // names the row after it, so both sides must agree for rows to pair).
  void Rename(const std::string& data_name) {
    for (const char* side : {"t", "b"}) {
      std::string json = Slurp(dir_ + side + "/dump.json");
      std::string from = "\"data_name\": \"" + kVictim + "\"";
      size_t at = json.find(from);
      ASSERT_NE(at, std::string::npos);
      json.replace(at, from.size(), "\"data_name\": \"" + data_name + "\"");
      std::ofstream(dir_ + side + "/dump.json", std::ios::trunc) << json;
    }
  }
  // Compares; expects a failure naming `what`.
  void ExpectRefused(const std::string& what) {
    CmdRun r = lockstep::testing::RunLockstep("compare " + dir_ + "t " + dir_ +
                                              "b -o " + dir_ + "out");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(what), std::string::npos) << r.out;
  }
  std::string dir_;
  fs::path base_;
};

TEST_F(HostilePathsTest, DotDotDataNameIsRefused) {
  Rename("../../outside.pt");
  ExpectRefused("'..' leaves dump_tensor_data");
}

TEST_F(HostilePathsTest, AbsoluteDataNameIsRefused) {
  Rename(dir_ + "outside.pt");
  ExpectRefused("absolute path");
}

TEST_F(HostilePathsTest, SymlinkLeavingTheDumpIsNotFollowed) {
  fs::create_symlink(dir_ + "outside.pt",
                     dir_ + "t/dump_tensor_data/" + kVictim);
  ExpectRefused("is a symbolic link");
}

TEST_F(HostilePathsTest, SymlinkToDevZeroIsNotRead) {
  // Read, /dev/zero would be consumed until memory ran out.
  fs::create_symlink("/dev/zero", dir_ + "t/dump_tensor_data/" + kVictim);
  ExpectRefused("is a symbolic link");
}

TEST_F(HostilePathsTest, FifoDoesNotBlock) {
  // Opened for reading, a FIFO without a writer would block forever.
  std::string fifo = dir_ + "t/dump_tensor_data/" + kVictim;
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ExpectRefused("not a regular file");
}

TEST_F(HostilePathsTest, DirectoryInPlaceOfATensorIsRefused) {
  fs::create_directory(dir_ + "t/dump_tensor_data/" + kVictim);
  ExpectRefused("not a regular file");
}

TEST_F(HostilePathsTest, SymlinkedTensorDirectoryIsNotFollowed) {
  fs::rename(dir_ + "t/dump_tensor_data", dir_ + "elsewhere");
  fs::create_directory_symlink(dir_ + "elsewhere", dir_ + "t/dump_tensor_data");
  ExpectRefused("is a symbolic link");
}

}  // namespace
