// Packed tensor dumps (dump_tensor_data.pack) read everywhere a dump is
// read: compare of two packed dumps equals compare of the same dumps in
// msprobe's layout and of their export; export writes msprobe's layout
// byte for byte and never overwrites; a damaged pack is an error that names
// it, never a wrong number.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lockstep/compare/compare_dumps.h"
#include "lockstep/compare/inspect.h"
#include "lockstep/format/export.h"
#include "lockstep/format/pt_writer.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/format/tensor_pack.h"
#include "testing/run_lockstep.h"
#include "testing/synthetic_run.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::Fault;
using testing::FreshTestDir;
using testing::Slurp;
using testing::SyntheticRun;

// A target (precision fault at op 3) and a baseline, each in `dir`/name.
void WritePair(const std::string& dir, bool packed, int64_t elements = 1000) {
  SyntheticRun base;
  base.elements = elements;
  base.packed = packed;
  SyntheticRun target = base;
  target.fault = Fault::kPrecision;
  target.fault_op = 3;
  ASSERT_TRUE(WriteSyntheticRun(target, dir + "target").ok());
  ASSERT_TRUE(WriteSyntheticRun(base, dir + "baseline").ok());
}

CompareResult Compare(const std::string& t, const std::string& b) {
  CompareOptions o;
  o.jobs = 2;
  StatusOr<CompareResult> r = CompareDumpPaths(t, b, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(*r) : CompareResult();
}

void ExpectSameRows(const CompareResult& a, const CompareResult& b) {
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    const CompareRow& x = a.rows[i];
    const CompareRow& y = b.rows[i];
    EXPECT_EQ(x.npu_name(), y.npu_name());
    EXPECT_EQ(x.verdict, y.verdict) << x.npu_name();
    ASSERT_EQ(x.cells.size(), y.cells.size());
    for (size_t c = 0; c < x.cells.size(); ++c)
      EXPECT_EQ(x.cells[c], y.cells[c]) << x.npu_name() << " column " << c;
  }
  EXPECT_EQ(a.first_divergence.entry, b.first_divergence.entry);
  EXPECT_EQ(a.summary.error, b.summary.error);
  EXPECT_EQ(a.summary.pass, b.summary.pass);
}

TEST(PackedDumpTest, CompareOfPackEqualsCompareOfExportAndOfNpyFiles) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir + "packed/", true);
  WritePair(dir + "npy/", false);
  EXPECT_FALSE(fs::exists(dir + "packed/target/dump_tensor_data"));
  EXPECT_TRUE(fs::exists(dir + "packed/target/" + std::string(kPackFileName)));
  ExportOptions npy;  // the same files as the npy run's
  npy.tensor_format = TensorFileFormat::kNpy;
  for (const char* side : {"target", "baseline"}) {
    auto s = ExportDump(dir + "packed/" + side, dir + "export/" + side, npy);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->packed_ranks, 1);
    EXPECT_EQ(s->tensors, 16);
  }
  CompareResult packed =
      Compare(dir + "packed/target", dir + "packed/baseline");
  ASSERT_FALSE(packed.rows.empty());
  EXPECT_EQ(packed.first_divergence.entry, testing::SyntheticOpName(3));
  EXPECT_TRUE(packed.warnings.empty());
  ExpectSameRows(packed,
                 Compare(dir + "export/target", dir + "export/baseline"));
  ExpectSameRows(packed, Compare(dir + "npy/target", dir + "npy/baseline"));
  // One side packed, the other not.
  ExpectSameRows(packed, Compare(dir + "packed/target", dir + "npy/baseline"));
}

// Exported as .npy, a pack gives the files the probe writes unpacked, and
// the same dump.json.
TEST(PackedDumpTest, ExportAsNpyWritesMsprobeLayoutByteForByte) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir + "packed/", true);
  WritePair(dir + "npy/", false);
  ExportOptions npy;
  npy.tensor_format = TensorFileFormat::kNpy;
  ASSERT_TRUE(ExportDump(dir + "packed/target", dir + "out", npy).ok());
  EXPECT_EQ(Slurp(dir + "out/dump.json"),
            Slurp(dir + "packed/target/dump.json"));
  int files = 0;
  for (const auto& e :
       fs::directory_iterator(dir + "npy/target/dump_tensor_data")) {
    ++files;
    fs::path exported =
        dir + "out/dump_tensor_data/" + e.path().filename().string();
    EXPECT_EQ(Slurp(exported), Slurp(e.path())) << exported;
  }
  EXPECT_EQ(files, 16);
  // The same from a dump root, mirrored below the output.
  fs::create_directories(dir + "root/step0");
  fs::rename(dir + "packed/target", dir + "root/step0/rank0");
  std::ofstream(dir + "root/env.json") << "{}";
  auto s = ExportDump(dir + "root", dir + "root_out/", npy);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(fs::exists(dir + "root_out/env.json"));
  EXPECT_TRUE(fs::exists(dir + "root_out/step0/rank0/dump_tensor_data/"
                               "Functional.relu.0.forward.output.0.npy"));
}

// Exported as .pt (the default), each tensor is the torch.save file of
// what the pack holds, and dump.json's data_names name those files; the
// rest of dump.json is unchanged, byte for byte.
TEST(PackedDumpTest, ExportAsPtWritesTorchSaveFilesAndRenamesDataNames) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir + "packed/", true);
  WritePair(dir + "npy/", false);
  auto s = ExportDump(dir + "packed/target", dir + "out");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->tensors, 16);
  std::string want_json = Slurp(dir + "packed/target/dump.json");
  size_t renamed = 0;
  for (size_t at = 0; (at = want_json.find(".npy\"", at)) != std::string::npos;
       ++renamed) {
    want_json.replace(at, 5, ".pt\"");
  }
  EXPECT_EQ(renamed, 16u);
  EXPECT_EQ(Slurp(dir + "out/dump.json"), want_json);
  int files = 0;
  for (const auto& e :
       fs::directory_iterator(dir + "npy/target/dump_tensor_data")) {
    ++files;
    std::string stem = e.path().stem().string();
    auto t = ReadTensorFile(e.path().string());
    ASSERT_TRUE(t.ok());
    std::string exported = dir + "out/dump_tensor_data/" + stem + ".pt";
    EXPECT_EQ(Slurp(exported), *EncodePt(*t, stem)) << exported;
  }
  EXPECT_EQ(files, 16);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir + "out/dump_tensor_data"),
                          fs::directory_iterator()),
            16);
  // The same rows but for the Data_name column, which names the .pt files.
  CompareResult got = Compare(dir + "out", dir + "npy/baseline");
  CompareResult want = Compare(dir + "npy/target", dir + "npy/baseline");
  ASSERT_EQ(got.rows.size(), want.rows.size());
  int pt_names = 0;
  for (size_t i = 0; i < got.rows.size(); ++i) {
    std::vector<std::string> cells;
    for (size_t c = 0; c < got.rows[i].cells.size(); ++c)
      cells.emplace_back(got.rows[i].cells[c]);
    size_t at = cells.back().find(".pt'");
    if (at != std::string::npos) {
      cells.back().replace(at, 4, ".npy'");
      ++pt_names;
    }
    got.rows[i].cells = PackedCells(cells);
  }
  EXPECT_EQ(pt_names, 16);
  ExpectSameRows(got, want);
}

TEST(PackedDumpTest, ExportOfMsprobeLayoutCopiesItsFilesNotLinks) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir, false);
  auto s = ExportDump(dir + "target", dir + "out");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->packed_ranks, 0);
  EXPECT_EQ(s->tensors, 16);
  ExpectSameRows(Compare(dir + "out", dir + "baseline"),
                 Compare(dir + "target", dir + "baseline"));
  // A dump_tensor_data that is a link is not followed.
  fs::rename(dir + "baseline/dump_tensor_data", dir + "elsewhere");
  fs::create_directory_symlink(dir + "elsewhere",
                               dir + "baseline/dump_tensor_data");
  s = ExportDump(dir + "baseline", dir + "out2");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->tensors, 0);
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_FALSE(fs::exists(dir + "out2/dump_tensor_data"));
}

TEST(PackedDumpTest, ExportNeverOverwritesAndLeavesNothingOnFailure) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir, true);
  fs::create_directories(dir + "taken");
  std::ofstream(dir + "taken/keep") << "mine";
  auto s = ExportDump(dir + "target", dir + "taken");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Slurp(dir + "taken/keep"), "mine");
  fs::create_directories(dir + "empty");
  EXPECT_TRUE(ExportDump(dir + "target", dir + "empty").ok());
  // A damaged entry: nothing appears at the output.
  std::string pack = dir + "baseline/" + std::string(kPackFileName);
  std::string bytes = Slurp(pack);
  bytes[200] = static_cast<char>(bytes[200] ^ 1);  // in the first entry
  std::ofstream(pack, std::ios::binary | std::ios::trunc) << bytes;
  s = ExportDump(dir + "baseline", dir + "bad_out");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kCorruption);
  EXPECT_FALSE(fs::exists(dir + "bad_out"));
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmpdir."), std::string::npos)
        << e.path();
}

TEST(PackedDumpTest, DamagedPackIsAnErrorNamingIt) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir, true);
  std::string pack = dir + "target/" + std::string(kPackFileName);
  // Cut off the index, as a crash before the step's end would.
  std::string bytes = Slurp(pack);
  fs::resize_file(pack, bytes.size() - 40);
  CompareResult r = Compare(dir + "target", dir + "baseline");
  ASSERT_FALSE(r.rows.empty());
  int errors = 0;
  for (const CompareRow& row : r.rows) {
    if (row.verdict != Verdict::kError) continue;
    ++errors;
    std::string all;
    for (const std::string& m : row.messages) all += m + "\n";
    for (std::string_view c : row.cells) all += std::string(c) + "\n";
    EXPECT_NE(all.find("no index"), std::string::npos) << all;
  }
  EXPECT_EQ(errors, 16);
  ASSERT_EQ(r.warnings.size(), 1u);  // once, not once per row
  EXPECT_NE(r.warnings[0].find(pack), std::string::npos) << r.warnings[0];
  StatusOr<DumpSummary> s = InspectDump(dir + "target");
  ASSERT_TRUE(s.ok());
  EXPECT_NE(s->ranks[0].pack_error.find("no index"), std::string::npos);
}

TEST(PackedDumpTest, PackThatIsALinkIsNotFollowed) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir, true);
  std::string pack = dir + "target/" + std::string(kPackFileName);
  fs::rename(pack, dir + "elsewhere.pack");
  fs::create_symlink(dir + "elsewhere.pack", pack);
  CompareResult r = Compare(dir + "target", dir + "baseline");
  for (const CompareRow& row : r.rows) EXPECT_EQ(row.verdict, Verdict::kError);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_FALSE(ExportDump(dir + "target", dir + "out").ok());
  EXPECT_FALSE(fs::exists(dir + "out"));
}

TEST(PackedDumpTest, FlippedByteInAStreamedTensorFailsItsCrc) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir, true, /*elements=*/1 << 19);  // 2 MiB per tensor: streamed
  std::string pack = dir + "target/" + std::string(kPackFileName);
  auto reader = PackReader::Open(pack);
  ASSERT_TRUE(reader.ok());
  const PackEntry* e =
      (*reader)->Find("Functional.linear.0.forward.input.0.npy");
  ASSERT_NE(e, nullptr);
  std::string bytes = Slurp(pack);
  bytes[e->offset + e->head + 12345] ^= 4;
  std::ofstream(pack, std::ios::binary | std::ios::trunc) << bytes;
  CompareResult r = Compare(dir + "target", dir + "baseline");
  bool found = false;
  for (const CompareRow& row : r.rows) {
    if (row.npu_name() != "Functional.linear.0.forward.input.0") {
      continue;
    }
    found = true;
    EXPECT_EQ(row.verdict, Verdict::kError);
  }
  EXPECT_TRUE(found);
}

TEST(PackedDumpTest, InspectCountsPackEntries) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir, true);
  StatusOr<DumpSummary> s = InspectDump(dir + "target");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->ranks.size(), 1u);
  EXPECT_TRUE(s->ranks[0].packed);
  EXPECT_EQ(s->ranks[0].tensor_files, 16);
  EXPECT_TRUE(s->ranks[0].pack_error.empty());
}

TEST(PackedDumpTest, ExportCommand) {
  std::string dir = FreshTestDir("lockstep_packed_");
  WritePair(dir, true);
  testing::CmdRun help = testing::RunLockstep("export --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Example"), std::string::npos);
  testing::CmdRun run =
      testing::RunLockstep("export " + dir + "target -o " + dir + "out");
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("16 tensor files"), std::string::npos) << run.out;
  EXPECT_TRUE(fs::exists(dir + "out/dump_tensor_data/" +
                         testing::SyntheticOpName(3) + ".output.0.pt"));
  run = testing::RunLockstep("export " + dir + "target -o " + dir + "out");
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_NE(run.out.find("never overwrites"), std::string::npos) << run.out;
  run = testing::RunLockstep("export " + dir + "target --tensor-format npy " +
                             "-o " + dir + "out_npy");
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_TRUE(fs::exists(dir + "out_npy/dump_tensor_data/" +
                         testing::SyntheticOpName(3) + ".output.0.npy"));
  run = testing::RunLockstep("export " + dir + "target --tensor-format pth " +
                             "-o " + dir + "out_pth");
  EXPECT_EQ(run.code, 2) << run.out;
  EXPECT_FALSE(fs::exists(dir + "out_pth"));
  run = testing::RunLockstep("inspect " + dir + "target");
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("16 in dump_tensor_data.pack"), std::string::npos)
      << run.out;
  run = testing::RunLockstep("compare " + dir + "out " + dir + "baseline -o " +
                             dir + "cmp");
  EXPECT_EQ(run.code, 1) << run.out;  // the planted divergence
}

}  // namespace
}  // namespace lockstep
