// Bad input and faults while dumping: tensors the probe cannot read (sparse,
// quantized, nested, complex), a full disk. The rule under test: training
// goes on, the probe's Status says what failed, and dump.json lists what was
// skipped under "skipped".
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "lockstep/torch/probe.h"
#include "testing/tmpfs.h"
#include "torch/probe_testing.h"

namespace lockstep {
namespace {

using testing::Names;
using testing::ProbeTest;
using testing::RunTiny;
using testing::Tiny;
namespace fs = std::filesystem;

// The dump's top-level "skipped" list as (name, reason) pairs.
std::vector<std::pair<std::string, std::string>> Skipped(const DumpFile& d) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : d.extra) {
    if (key != "skipped") continue;
    for (const PyValue& item : value.items()) {
      const PyValue* name = item.Find("name");
      const PyValue* reason = item.Find("reason");
      if (name == nullptr || reason == nullptr) {
        ADD_FAILURE() << "a skipped item lacks name or reason";
        continue;
      }
      out.emplace_back(name->as_str(), reason->as_str());
    }
  }
  return out;
}

const PyValue* Entry(const DumpFile& d, const std::string& name) {
  for (const DumpEntry& e : d.entries) {
    if (e.name == name) return &e.value;
  }
  ADD_FAILURE() << "no entry " << name;
  return nullptr;
}

// The first output tensor dict of an entry.
const PyValue* Output0(const DumpFile& d, const std::string& name) {
  const PyValue* e = Entry(d, name);
  const PyValue* out = e ? e->Find("output") : nullptr;
  if (out == nullptr || out->items().empty()) return nullptr;
  return &out->items()[0];
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_F(ProbeTest, UnreadableTensorsAreListedAsSkippedAndTrainingGoesOn) {
  for (ProbeTask task :
       {ProbeTask::kStatistics, ProbeTask::kTensor, ProbeTask::kMd5}) {
    SCOPED_TRACE(std::string(ProbeTaskName(task)));
    fs::remove_all(dir_);
    at::Tensor x = at::linspace(-1, 1, 6).reshape({2, 3});
    at::Tensor row = x.narrow(0, 0, 1);
    auto p = MakeProbe(Config(task));
    ASSERT_TRUE(p->Start().ok());
    at::Tensor sparse = x.to_sparse();                              // COO
    at::Tensor q = at::quantize_per_tensor(x, 0.1, 0, at::kQInt8);  // int8
    at::Tensor nested = at::_nested_tensor_from_tensor_list({x, row});
    at::Tensor z = at::complex(x, x);  // complex64
    at::Tensor after = at::cos(x);     // an ordinary op after all of them
    ASSERT_TRUE(p->Stop().ok());
    EXPECT_TRUE(at::allclose(after, x.cos()));

    DumpFile d = ReadDump();
    // The entries are there, with dtype, shape (where a tensor has one),
    // null statistics and the reason.
    struct Want {
      std::string entry, reason, dtype;
      bool has_shape;
    };
    const Want wants[] = {
        {"Torch.to_sparse.0.forward", "sparse tensor", "torch.float32", true},
        {"Torch.quantize_per_tensor.0.forward", "quantized tensor",
         "torch.qint8", true},
        {"Aten._nested_tensor_from_tensor_list.0.forward", "nested tensor",
         "torch.float32", false},
        {"Torch.complex.0.forward", "dtype ComplexFloat", "torch.complex64",
         true},
    };
    for (const Want& w : wants) {
      SCOPED_TRACE(w.entry);
      const PyValue* t = Output0(d, w.entry);
      ASSERT_NE(t, nullptr);
      ASSERT_NE(t->Find("skipped"), nullptr);
      EXPECT_TRUE(Contains(t->Find("skipped")->as_str(), w.reason))
          << t->Find("skipped")->as_str();
      EXPECT_EQ(t->Find("dtype")->as_str(), w.dtype);
      EXPECT_EQ(t->Find("shape")->is_none(), !w.has_shape);
      EXPECT_TRUE(t->Find("Max")->is_none());
      EXPECT_EQ(t->Find("data_name"), nullptr) << "no file for it";
      EXPECT_EQ(t->Find("md5"), nullptr);
    }
    // The ordinary op is summarized as usual.
    const PyValue* cos = Output0(d, "Torch.cos.0.forward");
    ASSERT_NE(cos, nullptr);
    EXPECT_EQ(cos->Find("skipped"), nullptr);
    // x = -1, -0.6, ..., 1: the largest cosine is cos(+-0.2) (float32).
    EXPECT_NEAR(cos->Find("Max")->as_double(), std::cos(0.2), 1e-6);
    // The top-level list names each skipped tensor.
    auto skipped = Skipped(d);
    std::vector<std::string> names;
    for (const auto& s : skipped) names.push_back(s.first);
    for (const char* stem :
         {"Torch.to_sparse.0.forward.output.0",
          "Torch.quantize_per_tensor.0.forward.output.0",
          "Aten._nested_tensor_from_tensor_list.0.forward.output.0",
          "Torch.complex.0.forward.output.0"}) {
      EXPECT_NE(std::find(names.begin(), names.end(), stem), names.end())
          << stem;
    }
  }
}

TEST_F(ProbeTest, SparseGradientInBackwardIsSkippedAndTheStepCompletes) {
  auto p = MakeProbe(Config());
  ASSERT_TRUE(p->Start().ok());
  at::Tensor weight = at::linspace(0, 1, 12).reshape({4, 3}).requires_grad_();
  at::Tensor idx = at::tensor({0, 2, 2}, at::kLong);
  at::Tensor y = at::embedding(weight, idx, -1, false, /*sparse=*/true);
  y.sum().backward(at::ones({}));
  ASSERT_TRUE(p->Stop().ok());
  ASSERT_TRUE(weight.grad().defined());
  EXPECT_TRUE(weight.grad().is_sparse());
  // Rows 0 and 2 got gradient (row 2 twice).
  at::Tensor g = weight.grad().to_dense();
  EXPECT_TRUE(at::equal(g.sum(1), at::tensor({3.f, 0.f, 6.f, 0.f})));

  DumpFile d = ReadDump();
  const PyValue* e = Entry(d, "Functional.embedding.0.backward");
  ASSERT_NE(e, nullptr);
  const PyValue& grad_weight = e->Find("output")->items()[0];
  ASSERT_NE(grad_weight.Find("skipped"), nullptr);
  EXPECT_TRUE(Contains(grad_weight.Find("skipped")->as_str(), "sparse"));
  // The incoming gradient is dense and summarized.
  const PyValue& grad_in = e->Find("input")->items()[0];
  EXPECT_EQ(grad_in.Find("skipped"), nullptr);
  EXPECT_EQ(grad_in.Find("Max")->as_double(), 1.0);
}

// A small tmpfs mounted over a test directory: a real full disk (ENOSPC).
// Needs root and a mount namespace that allows it; skips otherwise.
class FullDiskTest : public ProbeTest {
 protected:
  void SetUp() override {
    ProbeTest::SetUp();
    fs::create_directories(dir_);
    std::string why = testing::MountTmpfs(dir_.string(), "256k");
    if (!why.empty()) GTEST_SKIP() << why;
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) testing::UnmountTmpfs(dir_.string());
    ProbeTest::TearDown();
  }
  // Fills the disk but `leave` bytes; returns the filler's path.
  std::string Fill(size_t leave) {
    std::string path = (dir_ / "filler").string();
    std::ofstream f(path, std::ios::binary);
    std::string block(4096, 'x');
    while (f.write(block.data(), block.size())) {
      f.flush();
      std::error_code ec;
      fs::space_info s = fs::space(dir_, ec);
      if (ec || s.available <= leave) break;
    }
    return path;
  }
  bool mounted_ = false;
};

TEST_F(FullDiskTest, TensorFilesThatDoNotFitAreListedAndTrainingGoesOn) {
  ProbeOptions o;
  o.write_env = false;
  o.write_behind = false;  // step by step, no write in flight
  auto p = MakeProbe(Config(ProbeTask::kTensor), o);
  // 64 KiB inputs: the first few fit in the 256 KiB disk, then no more.
  at::Tensor x = at::linspace(-1, 1, 16384);
  ASSERT_TRUE(p->Start().ok());
  at::Tensor y;
  for (int i = 0; i < 6; ++i) y = at::cos(x + i);
  Status st = p->Step();
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "No space left on device"))
      << st.message();
  // Step 0's dump.json is small and was written; it lists the files that
  // are missing, with the reason.
  DumpFile d = ReadDump(0);
  EXPECT_EQ(d.entries.size(), 12u);  // add and cos, 6 times
  auto skipped = Skipped(d);
  ASSERT_FALSE(skipped.empty());
  for (const auto& [name, reason] : skipped) {
    EXPECT_TRUE(Contains(name, ".npy")) << name;
    EXPECT_TRUE(Contains(reason, "No space left on device")) << reason;
    EXPECT_FALSE(fs::exists(RankDir(0) + "/dump_tensor_data/" + name)) << name;
  }
  // No half-written file is left behind.
  for (const auto& f : fs::directory_iterator(RankDir(0) + "/dump_tensor_data"))
    EXPECT_FALSE(Contains(f.path().filename().string(), ".tmp")) << f.path();
  // The probe keeps going: the disk is freed, and step 1 is complete.
  fs::remove_all(RankDir(0) + "/dump_tensor_data");
  at::cos(at::ones({3}));
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d1 = ReadDump(1);
  EXPECT_EQ(Names(d1), (std::vector<std::string>{"Torch.ones.0.forward",
                                                 "Torch.cos.0.forward"}));
  EXPECT_TRUE(Skipped(d1).empty());
}

TEST_F(FullDiskTest, AStepWhoseDumpJsonFailsIsNamedInTheNextOne) {
  ProbeOptions o;
  o.write_env = false;
  o.write_behind = false;  // Step() reports its own dump.json
  auto p = MakeProbe(Config(), o);
  Tiny m;
  ASSERT_TRUE(p->Start().ok());
  RunTiny(m);
  ASSERT_TRUE(p->Step().ok());
  std::string filler = Fill(/*leave=*/0);
  RunTiny(m);  // step 1: its dump.json cannot be written
  Status st = p->Step();
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
  EXPECT_FALSE(fs::exists(RankDir(1) + "/dump.json"));
  fs::remove(filler);
  RunTiny(m);  // step 2: written, and says what step 1 lost
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d2 = ReadDump(2);
  EXPECT_EQ(d2.entries.size(), 8u);
  auto skipped = Skipped(d2);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].first, "step1/rank0/dump.json");
  EXPECT_TRUE(Contains(skipped[0].second, "No space left on device"))
      << skipped[0].second;
  // Step 0 is untouched.
  EXPECT_EQ(ReadDump(0).entries.size(), 8u);
}

}  // namespace
}  // namespace lockstep
