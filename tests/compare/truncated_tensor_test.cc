// A tensor file that another process truncates while compare reads it (a
// run still writing its dump, a cleanup job) becomes an error row naming
// the file; it never kills the compare with SIGBUS and never passes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "lockstep/compare/compare_dumps.h"
#include "lockstep/format/tensor_file.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

const std::string kToy = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy";
const std::string kVictim = "Functional.linear.0.forward.input.0.pt";

TEST(TruncatedTensorTest, FileTruncatedWhileComparedIsAnErrorRow) {
  if (!fs::exists(kToy)) GTEST_SKIP() << "fixtures not found: " << kToy;
  std::string dir = testing::FreshTestDir("lockstep_truncated_");
  fs::path base;
  for (const auto& e : fs::recursive_directory_iterator(kToy + "/dumpA"))
    if (e.path().filename() == "dump.json") base = e.path().parent_path();
  fs::copy(base, dir + "t", fs::copy_options::recursive);
  fs::copy(base, dir + "b", fs::copy_options::recursive);
  std::string victim = dir + "t/dump_tensor_data/" + kVictim;
  CompareOptions options;
  options.jobs = 2;
  // Reads each file, then truncates the victim before its bytes are used:
  // the map now reaches past the end of the file.
  options.load_tensor = [&](const std::string& path) -> StatusOr<Tensor> {
    StatusOr<Tensor> t = ReadTensorFile(path);
    if (path == victim) EXPECT_EQ(::truncate(path.c_str(), 0), 0);
    return t;
  };
  StatusOr<CompareResult> r = CompareDumpPaths(dir + "t", dir + "b", options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  int victims = 0;
  for (const CompareRow& row : r->rows) {
    if (row.npu_name != "Functional.linear.0.forward.input.0") {
      EXPECT_EQ(row.verdict, Verdict::kPass) << row.npu_name;
      continue;
    }
    ++victims;
    EXPECT_EQ(row.verdict, Verdict::kError);
    std::string all;
    for (const std::string& m : row.messages) all += m + "\n";
    for (const std::string& c : row.cells) all += c + "\n";
    EXPECT_NE(all.find("shrank while it was being read"), std::string::npos)
        << all;
  }
  EXPECT_EQ(victims, 1);
  EXPECT_GT(r->summary.error, 0);
  bool warned = false;
  for (const std::string& w : r->warnings)
    warned = warned || w.find(victim) != std::string::npos;
  EXPECT_TRUE(warned);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
