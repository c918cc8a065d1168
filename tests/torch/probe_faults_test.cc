// Bad input and faults while dumping: tensors the probe cannot read (sparse,
// quantized, nested, complex), a full disk. The rule under test: training
// goes on, the probe's Status says what failed, and dump.json lists what was
// skipped under "skipped".
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>

#include "lockstep/core/env.h"
#include "lockstep/format/json_writer.h"
#include "lockstep/torch/probe.h"
#include "testing/fault_env.h"
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

// Links planted in a shared dump directory (a step directory, a rank
// directory, dump_tensor_data) never receive the probe's files: those steps
// fail, naming the link, and the directories linked to stay empty.
TEST_F(ProbeTest, PlantedLinksInTheDumpPathAreNeverWrittenThrough) {
  fs::path out1 = dir_ / "elsewhere1", out2 = dir_ / "elsewhere2",
           out3 = dir_ / "elsewhere3";
  for (const fs::path& p : {out1, out2, out3}) fs::create_directories(p);
  fs::create_directories(dir_ / "dump" / "step2");
  fs::create_directory_symlink(out1, dir_ / "dump" / "step1");
  fs::create_directory_symlink(out2, dir_ / "dump" / "step2" / "rank0");
  ProbeOptions o;
  o.write_env = false;
  auto p = MakeProbe(Config(ProbeTask::kTensor), o);
  Status started = p->Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  std::vector<Status> results;
  for (int step = 0; step < 4; ++step) {
    if (step == 3) {  // planted while the run goes on
      fs::create_directories(dir_ / "dump" / "step3" / "rank0");
      fs::create_directory_symlink(
          out3, dir_ / "dump" / "step3" / "rank0" / "dump_tensor_data");
    }
    at::cos(at::ones({3}) * step);
    results.push_back(step < 3 ? p->Step() : p->Stop());
  }
  EXPECT_TRUE(results[0].ok()) << results[0].ToString();
  for (int step = 1; step < 4; ++step) {
    EXPECT_FALSE(results[step].ok()) << "step " << step;
    EXPECT_TRUE(Contains(results[step].ToString(), "symbolic link"))
        << results[step].ToString();
  }
  for (const fs::path& p : {out1, out2, out3})
    EXPECT_TRUE(fs::is_empty(p)) << p << " was written through a link";
  EXPECT_EQ(ReadDump(0).entries.size(), 3u);  // ones, mul, cos
}

// A full disk of 256 KiB, two ways: a small tmpfs mounted over the test
// directory (the kernel's own ENOSPC; needs root and a mount namespace that
// allows it, skips otherwise), and FaultEnv (the same disk in the Env that
// every writer goes through; no root, runs everywhere).
enum class Disk { kTmpfs, kFaultEnv };

std::string DiskName(Disk d) {
  return d == Disk::kTmpfs ? "Tmpfs" : "FaultEnv";
}

class FullDiskTest : public ProbeTest,
                     public ::testing::WithParamInterface<Disk> {
 protected:
  void SetUp() override {
    ProbeTest::SetUp();
    // The test's name has a '/' (".../FaultEnv"): one directory, not two.
    std::string name =
        dir_.parent_path().filename().string() + "_" + DiskName(GetParam());
    dir_ = dir_.parent_path().parent_path() / name;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (GetParam() == Disk::kFaultEnv) {
      env_.SetBlockBytes(4096);  // as tmpfs: a 5 KiB file takes 8 KiB
      env_.SetFreeBytes(256 << 10);
      scope_.emplace(&env_);
      return;
    }
    std::string why = testing::MountTmpfs(dir_.string(), "256k");
    if (!why.empty()) GTEST_SKIP() << why;
    mounted_ = true;
  }
  void TearDown() override {
    scope_.reset();
    if (mounted_) testing::UnmountTmpfs(dir_.string());
    ProbeTest::TearDown();
  }
  // Fills the disk but `leave` bytes.
  void Fill(size_t leave) {
    if (GetParam() == Disk::kFaultEnv) {
      filled_ =
          env_.free_bytes() - std::min<uint64_t>(leave, env_.free_bytes());
      env_.SetFreeBytes(env_.free_bytes() - filled_);
      return;
    }
    std::ofstream f(Filler(), std::ios::binary);
    std::string block(4096, 'x');
    while (f.write(block.data(), block.size())) {
      f.flush();
      std::error_code ec;
      fs::space_info s = fs::space(dir_, ec);
      if (ec || s.available <= leave) break;
    }
  }
  // Gives back what Fill took.
  void Unfill() {
    if (GetParam() == Disk::kFaultEnv) {
      env_.SetFreeBytes(env_.free_bytes() + filled_);
    } else {
      fs::remove(Filler());
    }
  }
  std::string Filler() const { return (dir_ / "filler").string(); }

  bool mounted_ = false;
  testing::FaultEnv env_;
  std::optional<ScopedEnv> scope_;
  uint64_t filled_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Disks, FullDiskTest,
                         ::testing::Values(Disk::kTmpfs, Disk::kFaultEnv),
                         [](const ::testing::TestParamInfo<Disk>& info) {
                           return DiskName(info.param);
                         });

TEST_P(FullDiskTest, TensorFilesThatDoNotFitAreListedAndTrainingGoesOn) {
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
  // were not written, with the reason, and that the ones written were
  // removed to make room (a partial step is worth less than the
  // statistics of the steps after it).
  DumpFile d = ReadDump(0);
  EXPECT_EQ(d.entries.size(), 12u);  // add and cos, 6 times
  auto skipped = Skipped(d);
  ASSERT_FALSE(skipped.empty());
  int not_written = 0, removed = 0;
  for (const auto& [name, reason] : skipped) {
    if (Contains(name, ".pt")) {
      ++not_written;
      EXPECT_TRUE(Contains(reason, "No space left on device")) << reason;
    } else {
      ++removed;
      EXPECT_EQ(name, "dump_tensor_data");
      EXPECT_TRUE(Contains(reason, "tensor files of this step removed"));
    }
  }
  EXPECT_GT(not_written, 0);
  EXPECT_EQ(removed, 1);
  EXPECT_FALSE(fs::exists(RankDir(0) + "/dump_tensor_data"));
  // The probe keeps going, with statistics only, even once space is free,
  // and says so each step.
  at::cos(at::ones({3}));
  st = p->Stop();
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_TRUE(Contains(st.message(),
                       "tensor files not saved: the disk was "
                       "found full at step 0"))
      << st.message();
  DumpFile d1 = ReadDump(1);
  EXPECT_EQ(Names(d1), (std::vector<std::string>{"Torch.ones.0.forward",
                                                 "Torch.cos.0.forward"}));
  EXPECT_NE(Output0(d1, "Torch.cos.0.forward"), nullptr);
  EXPECT_EQ(Output0(d1, "Torch.cos.0.forward")->Find("data_name"), nullptr);
  EXPECT_NE(Output0(d1, "Torch.cos.0.forward")->Find("Max"), nullptr);
  ASSERT_EQ(Skipped(d1).size(), 1u);
  EXPECT_TRUE(Contains(Skipped(d1)[0].second,
                       "tensor files not saved: the disk was found full at "
                       "step 0"));
}

TEST_P(FullDiskTest, AStepWhoseDumpJsonFailsIsNamedInTheNextOne) {
  ProbeOptions o;
  o.write_env = false;
  o.write_behind = false;  // Step() reports its own dump.json
  auto p = MakeProbe(Config(), o);
  Tiny m;
  ASSERT_TRUE(p->Start().ok());
  RunTiny(m);
  ASSERT_TRUE(p->Step().ok());
  Fill(/*leave=*/0);
  RunTiny(m);  // step 1: its dump.json cannot be written
  Status st = p->Step();
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
  EXPECT_FALSE(fs::exists(RankDir(1) + "/dump.json"));
  Unfill();
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

// A whole run into a disk that fills part-way through a step (write-behind,
// as by default): the partial step's tensor files make room for statistics;
// every step directory left holds a readable dump.json naming every tensor
// file beside it, later steps keep statistics only and say so, the steps
// that did not fit at all leave nothing, and Stop's Status counts them.
TEST_P(FullDiskTest, ALongRunOnAFullDiskLeavesOnlyReadableSteps) {
  ProbeOptions o;
  o.write_env = false;
  auto p = MakeProbe(Config(ProbeTask::kTensor), o);
  at::Tensor x = at::linspace(-1, 1, 1024);  // 4 KiB a tensor (8 KiB a file)
  ASSERT_TRUE(p->Start().ok());
  Status last;
  const int kSteps = 50;
  for (int step = 0; step < kSteps; ++step) {
    at::sin(at::cos(x + step));  // 6 files, 48 KiB a step
    Status st = step + 1 < kSteps ? p->Step() : p->Stop();
    if (!st.ok()) last = st;
  }
  ASSERT_EQ(last.code(), StatusCode::kIoError) << last.ToString();
  EXPECT_TRUE(Contains(last.message(), "No space left on device"));
  // "N dump.json files not written (step<a>/rank0/dump.json to ...)".
  size_t at = last.message().find(" dump.json files not written");
  ASSERT_NE(at, std::string::npos) << last.message();
  size_t from = last.message().rfind(' ', at - 1) + 1;
  int lost = std::stoi(last.message().substr(from, at - from));
  int with_json = 0, with_tensors = 0, removed = 0, statistics_only = 0;
  int64_t filled = -1;
  for (int step = 0; step < kSteps; ++step) {
    std::string rank_dir = RankDir(step);
    if (!fs::exists(dir_ / "dump" / ("step" + std::to_string(step)))) continue;
    ASSERT_TRUE(fs::exists(rank_dir + "/dump.json"))
        << "a step directory without dump.json: step " << step;
    StatusOr<DumpFile> d = ReadDumpJson(rank_dir + "/dump.json");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ++with_json;
    std::set<std::string> named;
    for (const DumpEntry& e : d->entries) {
      std::string text = ToPyJson(e.value, 0);
      const std::string key = "\"data_name\": \"";
      for (size_t k = text.find(key); k != std::string::npos;
           k = text.find(key, k + 1)) {
        size_t b = k + key.size();
        named.insert(text.substr(b, text.find('"', b) - b));
      }
    }
    std::set<std::string> on_disk;
    if (fs::exists(rank_dir + "/dump_tensor_data")) {
      for (const auto& f :
           fs::directory_iterator(rank_dir + "/dump_tensor_data"))
        on_disk.insert(f.path().filename().string());
    }
    for (const std::string& f : on_disk)
      EXPECT_TRUE(named.count(f)) << "orphan " << f << " in step " << step;
    std::string skipped;
    for (const auto& [name, reason] : Skipped(*d))
      skipped += name + ": " + reason + "\n";
    if (skipped.empty()) {  // complete, and before the disk filled
      EXPECT_EQ(on_disk.size(), 6u) << "step " << step;
      EXPECT_EQ(removed + statistics_only, 0) << "step " << step;
      ++with_tensors;
    } else if (Contains(skipped, "tensor files of this step removed")) {
      EXPECT_TRUE(on_disk.empty()) << "step " << step;
      EXPECT_EQ(statistics_only, 0) << "step " << step;
      if (removed++ == 0) filled = step;
    } else {
      EXPECT_TRUE(on_disk.empty() && named.empty()) << "step " << step;
      EXPECT_TRUE(
          Contains(skipped, "tensor files not saved: the disk was found full"))
          << skipped;
      ++statistics_only;
    }
  }
  EXPECT_GT(with_tensors, 2);
  EXPECT_TRUE(removed == 1 || removed == 2) << removed;  // write-behind: 2
  EXPECT_GT(statistics_only, 2);
  EXPECT_EQ(filled, with_tensors);
  EXPECT_EQ(with_json + lost, kSteps) << last.message();
  // The steps lost are the last ones: nothing after them, no directory.
  EXPECT_TRUE(fs::exists(RankDir(kSteps - lost - 1) + "/dump.json"));
  // Failed writes leave no partial files behind.
  for (const auto& f : fs::recursive_directory_iterator(dir_))
    EXPECT_FALSE(Contains(f.path().string(), ".tmp.")) << f.path();
}

}  // namespace
}  // namespace lockstep
