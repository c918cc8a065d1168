#include "lockstep/format/dump_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "lockstep/core/file.h"
#include "lockstep/format/discovery.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/pt_writer.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/format/tensor_pack.h"
#include "testing/same_bytes.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

const std::string kData =
    std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/dump_json";
const std::string kMsprobe = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";

std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : "";
}

using lockstep::testing::SameBytes;

// msprobe wrote these dump.json files with json.dump(indent=1): read and
// written back they are byte-identical.
TEST(DumpWriterTest, MsprobeDumpsRoundTripByteForByte) {
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(kMsprobe)) {
    std::string path = e.path().string();
    if (e.path().filename() != "dump.json" ||
        path.find("/cross_framework/") != std::string::npos ||
        path.find("/layer_mapping/") != std::string::npos) {
      continue;
    }
    auto d = ReadDumpJson(path);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_TRUE(SameBytes(EncodeDumpJson(*d), Slurp(path))) << path;
    ++n;
  }
  EXPECT_EQ(n, 13);
}

// Written with indent=4 by msprobe's tests: compare with what Python's
// json.dump(json.load(f), out, indent=1) gives (make_expected.py).
TEST(DumpWriterTest, ReindentedDumpsMatchPython) {
  for (const char* c : {"cross_framework/pytorch", "cross_framework/mindspore",
                        "layer_mapping/pytorch", "layer_mapping/mindspore"}) {
    auto d = ReadDumpJson(kMsprobe + "/" + c + "/dump.json");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    std::string name = c;
    name[name.find('/')] = '_';
    EXPECT_TRUE(SameBytes(EncodeDumpJson(*d),
                          Slurp(kData + "/" + name + ".indent1.json")))
        << c;
  }
}

TEST(DumpWriterTest, MissingFrameworkAndExtraKeysRoundTrip) {
  std::string text =
      "{\n \"task\": \"statistics\",\n \"level\": \"L1\",\n \"dump_data_dir\": "
      "null,\n"
      " \"extra\": [\n  1\n ],\n \"data\": {}\n}";
  auto d = ReadDumpJsonFromString(text, "dump.json");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(EncodeDumpJson(*d), text);
}

class DumpWriterDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("lockstep_dump_writer_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

PyValue TensorLeaf(const std::string& data_name) {
  return PyValue::Dict({{"type", PyValue::Str("torch.Tensor")},
                        {"dtype", PyValue::Str("torch.float32")},
                        {"shape", PyValue::List({PyValue::Int(2)})},
                        {"Max", PyValue::Float(2.5)},
                        {"Min", PyValue::Float(-1.0)},
                        {"Mean", PyValue::Float(0.75)},
                        {"Norm", PyValue::Float(2.692582403567252)},
                        {"requires_grad", PyValue::Bool(false)},
                        {"data_name", PyValue::Str(data_name)}});
}

TEST_F(DumpWriterDirTest, WriteReadBackDiscoverAndLoadTensors) {
  std::string rank_dir = dir_ + "/step0/rank0";
  auto w = DumpWriter::Create(rank_dir);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  float vals[2] = {2.5f, -1.0f};
  Tensor t =
      Tensor::FromBytes(DType::kFloat32, {2},
                        std::string(reinterpret_cast<const char*>(vals), 8));
  auto name = (*w)->SaveTensor("Functional.relu.0.forward.input.0", t);
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(*name, "Functional.relu.0.forward.input.0.npy");
  PyValue relu =
      PyValue::Dict({{"input_args", PyValue::List({TensorLeaf(*name)})},
                     {"input_kwargs", PyValue::Dict({})},
                     {"output", PyValue::List({PyValue()})}});
  (*w)->AddEntry("Functional.relu.0.forward", relu);
  (*w)->AddEntry("Module.m.M.forward.0",
                 PyValue::Dict({{"output", PyValue::List({})}}));
  (*w)->AddStack("Functional.relu.0.forward",
                 {"File a.py, line 1, in f, \n x()"});
  (*w)->AddStack("Module.m.M.forward.0", {"File a.py, line 1, in f, \n x()"});
  (*w)->SetParent("Functional.relu.0.forward",
                  PyValue::Str("Module.m.M.forward.0"));
  (*w)->SetParent("Module.m.M.forward.0", PyValue());
  ASSERT_TRUE((*w)->Flush().ok());

  auto d = ReadDumpJson(rank_dir + "/dump.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->task, "tensor");
  EXPECT_TRUE(d->framework_given);
  EXPECT_EQ(d->dump_data_dir,
            fs::absolute(rank_dir + "/dump_tensor_data").string());
  ASSERT_EQ(d->entries.size(), 2u);
  EXPECT_TRUE(d->entries[0].value == relu);
  EXPECT_EQ(EncodeDumpJson(*d), Slurp(rank_dir + "/dump.json"));

  auto stack = ReadStackJson(rank_dir + "/stack.json");
  ASSERT_TRUE(stack.ok());
  EXPECT_EQ(stack->size(), 2u);
  EXPECT_NE(Slurp(rank_dir + "/stack.json")
                .find("\"0\": [\n  [\n   \"Functional.relu.0.forward\",\n"
                      "   \"Module.m.M.forward.0\"\n  ],"),
            std::string::npos);
  auto construct = ReadConstructJson(rank_dir + "/construct.json");
  ASSERT_TRUE(construct.ok());
  EXPECT_EQ(construct->at("Functional.relu.0.forward").as_str(),
            "Module.m.M.forward.0");

  auto back = ReadNpy(TensorDataDir(*d) + "/" + *name);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->data_as<float>()[0], 2.5f);

  auto layout = DiscoverDump(dir_);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_TRUE(layout->steps[0].ranks[0].has_tensor_data);
  EXPECT_TRUE(layout->steps[0].ranks[0].has_stack_json);
}

TEST_F(DumpWriterDirTest, ReAddedEntryMovesToTheEndLikeMsprobe) {
  auto w = DumpWriter::Create(dir_);
  ASSERT_TRUE(w.ok());
  (*w)->AddEntry("Module.m.M.forward.0",
                 PyValue::Dict({{"input_args", PyValue::List({})}}));
  (*w)->AddEntry("Functional.relu.0.forward", PyValue::Dict({}));
  (*w)->AddEntry("Module.m.M.forward.0",
                 PyValue::Dict({{"output", PyValue::List({})}}));
  EXPECT_EQ((*w)->entry_count(), 2u);
  auto d = ReadDumpJsonFromString((*w)->DumpJsonText(), "dump.json");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->entries[0].name, "Functional.relu.0.forward");
  EXPECT_EQ(d->entries[1].name, "Module.m.M.forward.0");
  EXPECT_NE(d->entries[1].value.Find("output"), nullptr);
  // Many re-adds compact the pieces and keep the order.
  for (int i = 0; i < 500; ++i)
    (*w)->AddEntry(std::string("e").append(std::to_string(i % 7)),
                   PyValue::Dict({}));
  d = ReadDumpJsonFromString((*w)->DumpJsonText(), "dump.json");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->entries.size(), 9u);
  EXPECT_EQ(d->entries.back().name, "e2");  // 499 % 7
}

TEST_F(DumpWriterDirTest, LazyDirIsMadeByFlushAndItsFailureReported) {
  DumpWriterOptions o;
  o.make_dir_lazily = true;
  std::string rank_dir = dir_ + "/step1/rank0";
  auto w = DumpWriter::Create(rank_dir, o);
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(PathExists(rank_dir));
  (*w)->AddEncodedEntry("Functional.relu.0.forward", "{}");
  ASSERT_TRUE((*w)->Flush().ok());
  auto d = ReadDumpJson(rank_dir + "/dump.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->entries.size(), 1u);
  EXPECT_EQ(d->entries[0].name, "Functional.relu.0.forward");
  // A path that cannot be a directory (a file is in the way) fails at
  // Flush, not at Create.
  ASSERT_TRUE(WriteFileAtomic(dir_ + "/file", "x").ok());
  auto bad = DumpWriter::Create(dir_ + "/file/rank0", o);
  ASSERT_TRUE(bad.ok());
  Status st = (*bad)->Flush();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("file/rank0"), std::string::npos)
      << st.ToString();
}

TEST_F(DumpWriterDirTest, EmptyDumpIsValidAndFlushesRepeat) {
  DumpWriterOptions o;
  o.task = "statistics";
  o.framework = "";
  auto w = DumpWriter::Create(dir_, o);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->DumpJsonText(),
            "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n "
            "\"dump_data_dir\": null,\n"
            " \"data\": {}\n}");
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_EQ(Slurp(dir_ + "/construct.json"), "{}");
  EXPECT_EQ(Slurp(dir_ + "/stack.json"), "{}");
  (*w)->AddEntry("a", PyValue::Dict({}));
  ASSERT_TRUE((*w)->Flush().ok());
  auto d = ReadDumpJson(dir_ + "/dump.json");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->framework_given);
  EXPECT_EQ(d->entries.size(), 1u);
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
  }
}

TEST_F(DumpWriterDirTest, ExtraKeysGoBeforeDataAndReplaceEarlierValues) {
  DumpWriterOptions o;
  o.task = "statistics";
  o.framework = "";
  auto w = DumpWriter::Create(dir_, o);
  ASSERT_TRUE(w.ok());
  (*w)->SetExtra("skipped", PyValue::List({PyValue::Str("first")}));
  (*w)->SetExtra("skipped", PyValue::List({PyValue::Str("x.npy")}));
  EXPECT_EQ((*w)->DumpJsonText(),
            "{\n \"task\": \"statistics\",\n \"level\": \"mix\",\n "
            "\"dump_data_dir\": null,\n"
            " \"skipped\": [\n  \"x.npy\"\n ],\n"
            " \"data\": {}\n}");
  ASSERT_TRUE((*w)->Flush().ok());
  auto d = ReadDumpJson(dir_ + "/dump.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->extra.size(), 1u);
  EXPECT_EQ(d->extra[0].first, "skipped");
  EXPECT_EQ(d->extra[0].second, PyValue::List({PyValue::Str("x.npy")}));
}

TEST_F(DumpWriterDirTest, TensorNamesCannotEscapeTheDirectory) {
  auto w = DumpWriter::Create(dir_);
  ASSERT_TRUE(w.ok());
  Tensor t = Tensor::FromBytes(DType::kUInt8, {1}, "x");
  const std::vector<std::string> kBad = {"",     ".",   "..",
                                         "../x", "a/b", std::string("a\0b", 3)};
  for (const std::string& bad : kBad) {
    auto r = (*w)->SaveTensor(bad, t);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(fs::exists(dir_ + "/x.npy"));
}

// With tensor_file kPt (the probe's default) the file is <stem>.pt, as
// torch.save writes it, and dump.json's data_name names it.
TEST_F(DumpWriterDirTest, PtTensorFilesAreTorchSaveBytes) {
  DumpWriterOptions o;
  o.tensor_file = TensorFileFormat::kPt;
  auto w = DumpWriter::Create(dir_ + "/pt", o);
  ASSERT_TRUE(w.ok());
  Tensor t = Tensor::FromBytes(DType::kInt16, {2, 1}, "abcd");
  const std::string stem = "Functional.relu.0.forward.input.0";
  auto name = (*w)->SaveTensor(stem, t);
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(*name, stem + ".pt");
  std::string path = dir_ + "/pt/dump_tensor_data/" + *name;
  auto bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, *EncodePt(t, stem));
  auto back = ReadTensorFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(back->data()), 4),
            "abcd");
  auto target = (*w)->TensorTargetFor("Tensor.add.0.forward.output.0");
  ASSERT_TRUE(target.ok());
  EXPECT_EQ(target->data_name, "Tensor.add.0.forward.output.0.pt");
  EXPECT_EQ(target->path,
            dir_ + "/pt/dump_tensor_data/Tensor.add.0.forward.output.0.pt");
  // A pack holds .npy bytes whatever tensor_file says.
  o.pack_tensors = true;
  auto packed = DumpWriter::Create(dir_ + "/packed", o);
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ(*(*packed)->SaveTensor(stem, t), stem + ".npy");
  ASSERT_TRUE((*packed)->Flush().ok());
}

// Packed: the tensors go into dump_tensor_data.pack, finished by Flush
// before dump.json (which has a null dump_data_dir); saving after that
// fails; RemoveTensors drops the pack.
TEST_F(DumpWriterDirTest, PackedTensorsGoIntoOnePackFinishedByFlush) {
  DumpWriterOptions o;
  o.pack_tensors = true;
  auto w = DumpWriter::Create(dir_ + "/a", o);
  ASSERT_TRUE(w.ok());
  Tensor t = Tensor::FromBytes(DType::kUInt8, {3}, "xyz");
  auto name = (*w)->SaveTensor("Functional.relu.0.forward.input.0", t);
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(*name, "Functional.relu.0.forward.input.0.npy");
  EXPECT_FALSE((*w)->SaveTensor("../x", t).ok());
  (*w)->AddEntry(
      "Functional.relu.0.forward",
      PyValue::Dict({{"input_args", PyValue::List({TensorLeaf(*name)})}}));
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_FALSE(fs::exists(dir_ + "/a/dump_tensor_data"));
  auto pack = PackReader::Open(dir_ + "/a/dump_tensor_data.pack");
  ASSERT_TRUE(pack.ok()) << pack.status().ToString();
  auto back = (*pack)->Read(*name);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(back->data()), 3), "xyz");
  auto d = ReadDumpJson(dir_ + "/a/dump.json");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->dump_data_dir.empty());
  EXPECT_FALSE((*w)->SaveTensor("late", t).ok());

  auto w2 = DumpWriter::Create(dir_ + "/b", o);
  ASSERT_TRUE(w2.ok());
  ASSERT_TRUE((*w2)->SaveTensor("one", t).ok());
  ASSERT_TRUE((*w2)->SaveTensor("two", t).ok());
  EXPECT_EQ((*w2)->RemoveTensors(), 2u);
  EXPECT_FALSE(fs::exists(dir_ + "/b/dump_tensor_data.pack"));
  ASSERT_TRUE((*w2)->Flush().ok());
  // A writer dropped before Flush leaves no pack without an index.
  {
    auto w3 = DumpWriter::Create(dir_ + "/c", o);
    ASSERT_TRUE(w3.ok());
    ASSERT_TRUE((*w3)->SaveTensor("one", t).ok());
  }
  EXPECT_FALSE(fs::exists(dir_ + "/c/dump_tensor_data.pack"));
}

TEST(DumpWriterTest, UnwritableDirFailsCleanly) {
  auto w = DumpWriter::Create("/proc/lockstep_cannot_create/rank0");
  EXPECT_FALSE(w.ok());
}

}  // namespace
}  // namespace lockstep
