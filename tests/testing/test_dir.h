// Helpers for tests that work in files: a fresh directory per test, and a
// whole file read back.
#ifndef LOCKSTEP_TESTS_TESTING_TEST_DIR_H_
#define LOCKSTEP_TESTS_TESTING_TEST_DIR_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace lockstep::testing {

// `TempDir()/<prefix><test name>/`, emptied and created; ends with '/'.
inline std::string FreshTestDir(const std::string& prefix) {
  std::string dir =
      ::testing::TempDir() + prefix +
      ::testing::UnitTest::GetInstance()->current_test_info()->name() + "/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The whole file ("" when it cannot be read).
inline std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_TEST_DIR_H_
