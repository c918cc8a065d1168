// lockstep replay on dumps the probe writes (tensor task) and on dumps
// written by hand: correctly rounded ops measure 0 ulp, an injected 1-ulp
// change on one is found, wrong gradients are found, fp16 ops that LibTorch
// 1.13 cannot run on the CPU are computed in fp32, and what cannot be
// replayed (random ops, statistics dumps, missing or corrupt tensor files)
// is listed with why, never dropped and never a crash.
#include "lockstep/torch/replay.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "lockstep/core/file.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/numerics/ulp.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/probe_testing.h"

namespace lockstep {
namespace {

using testing::ProbeTest;
using testing::RunTiny;
using testing::Tiny;

class ReplayTest : public ProbeTest {
 protected:
  ReplayResult Replay(const std::string& dump, int jobs = 1) {
    ReplayOptions o;
    o.dump = dump;
    o.jobs = jobs;
    StatusOr<ReplayResult> r = ReplayDump(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ReplayResult();
  }
  std::string Dump() const { return (dir_ / "dump").string(); }
  std::string TensorPath(const std::string& data_name) const {
    return RankDir() + "/dump_tensor_data/" + data_name;
  }
  // Runs `fn` under a tensor-task probe (one step).
  void Record(const std::function<void()>& fn) {
    std::unique_ptr<Probe> p = MakeProbe(Config(ProbeTask::kTensor));
    ASSERT_TRUE(p->Start().ok());
    fn();
    ASSERT_TRUE(p->Stop().ok());
  }
  // Rewrites a saved tensor through `edit`.
  void Edit(const std::string& data_name,
            const std::function<void(at::Tensor&)>& edit) {
    StatusOr<Tensor> t = ReadTensorFile(TensorPath(data_name));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    at::Tensor x = ToTorchTensor(*t);
    edit(x);
    StatusOr<Tensor> h = ToHostTensor(x);
    ASSERT_TRUE(h.ok());
    ASSERT_TRUE(WriteTensorFile(TensorPath(data_name), *h).ok());
  }
};

const ReplayCheck* Find(const ReplayResult& r, const std::string& entry,
                        const std::string& tensor = "output.0") {
  for (const ReplayCheck& c : r.checks) {
    if (c.entry == entry && c.tensor == tensor) return &c;
  }
  return nullptr;
}

TEST_F(ReplayTest, TinyRunHasNoSuspectAndEveryEntryIsReplayed) {
  DumpTiny(Config(ProbeTask::kTensor));
  ReplayResult r = Replay(Dump());
  EXPECT_EQ(r.entries, 8u);
  EXPECT_EQ(r.replayed, 8u);
  EXPECT_EQ(r.not_replayable, 0u);
  EXPECT_FALSE(r.first_suspect);
  const ReplayCheck* lin = Find(r, "Functional.linear.0.forward");
  ASSERT_NE(lin, nullptr);
  EXPECT_EQ(lin->op, "aten::linear");
  EXPECT_EQ(lin->kind, "accumulation");
  EXPECT_EQ(lin->dtype, "torch.float32");
  // relu is exact: 0 ulp, bound 0.
  const ReplayCheck* relu = Find(r, "Functional.relu.0.forward");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->max_ulp, 0);
  EXPECT_EQ(relu->bound, 0);
  // The backward of linear: gradients of input 1 (weight) and 2 (bias).
  EXPECT_NE(Find(r, "Functional.linear.0.backward", "output.1"), nullptr);
  EXPECT_NE(Find(r, "Functional.linear.0.backward", "output.2"), nullptr);
  for (const ReplayCheck& c : r.checks) {
    EXPECT_EQ(c.verdict, ReplayVerdict::kOk) << c.entry << " " << c.reason;
    EXPECT_LE(c.max_ulp, c.bound) << c.entry;
  }
}

TEST_F(ReplayTest, OneUlpOnACorrectlyRoundedOpIsFound) {
  at::Tensor a = at::randn({64}, at::TensorOptions().dtype(at::kFloat));
  at::Tensor b = at::randn({64}, at::TensorOptions().dtype(at::kFloat));
  Record([&] { at::mul(a, b); });
  ReplayResult clean = Replay(Dump());
  const ReplayCheck* mul = Find(clean, "Torch.mul.0.forward");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->max_ulp, 0);  // correctly rounded
  EXPECT_EQ(mul->verdict, ReplayVerdict::kOk);
  Edit("Torch.mul.0.forward.output.0.pt", [](at::Tensor& y) {
    float* p = y.data_ptr<float>();
    p[17] = static_cast<float>(StepUlps(p[17], 1, DType::kFloat32));
  });
  ReplayResult bad = Replay(Dump());
  ASSERT_TRUE(bad.first_suspect);
  const ReplayCheck& s = bad.checks[*bad.first_suspect];
  EXPECT_EQ(s.entry, "Torch.mul.0.forward");
  EXPECT_EQ(s.max_ulp, 1);
  EXPECT_EQ(s.worst_index, 17);
  EXPECT_NE(s.reason.find("1 ulp > bound 0"), std::string::npos) << s.reason;
}

TEST_F(ReplayTest, AWrongGradientIsFound) {
  DumpTiny(Config(ProbeTask::kTensor));
  // cos's backward: -sin(x) * g, off by 1e-3 relative in one element.
  Edit("Torch.cos.0.backward.output.0.pt", [](at::Tensor& g) {
    int64_t i = g.abs().flatten().argmax().item<int64_t>();
    g.data_ptr<float>()[i] *= 1.001f;
  });
  ReplayResult r = Replay(Dump());
  ASSERT_TRUE(r.first_suspect);
  EXPECT_EQ(r.checks[*r.first_suspect].entry, "Torch.cos.0.backward");
  EXPECT_EQ(r.suspect, 1u);
}

TEST_F(ReplayTest, RandomOpsAreListedWithWhy) {
  at::Tensor x = at::ones({100});
  Record([&] {
    at::dropout(x, 0.5, /*train=*/true);
    at::dropout(x, 0.5, /*train=*/false);
  });
  ReplayResult r = Replay(Dump());
  const ReplayCheck* train = Find(r, "Functional.dropout.0.forward", "");
  ASSERT_NE(train, nullptr);
  EXPECT_EQ(train->verdict, ReplayVerdict::kNotReplayable);
  EXPECT_NE(train->reason.find("random"), std::string::npos) << train->reason;
  // In eval mode dropout is the identity: replayed.
  const ReplayCheck* eval = Find(r, "Functional.dropout.1.forward");
  ASSERT_NE(eval, nullptr);
  EXPECT_EQ(eval->verdict, ReplayVerdict::kOk);
}

TEST_F(ReplayTest, StatisticsDumpIsNotReplayable) {
  DumpTiny(Config(ProbeTask::kStatistics));
  ReplayResult r = Replay(Dump());
  EXPECT_EQ(r.replayed, 0u);
  EXPECT_EQ(r.not_replayable, 8u);
  for (const ReplayCheck& c : r.checks) {
    EXPECT_NE(c.reason.find("statistics dump holds no tensors"),
              std::string::npos)
        << c.reason;
  }
}

TEST_F(ReplayTest, MissingAndCorruptTensorFilesAreReported) {
  DumpTiny(Config(ProbeTask::kTensor));
  std::filesystem::remove(TensorPath("Torch.cos.0.forward.input.0.pt"));
  {
    std::ofstream f(TensorPath("Torch.sum.0.forward.output.0.pt"),
                    std::ios::trunc | std::ios::binary);
    f << "PK\x03\x04 not a zip";
  }
  ReplayResult r = Replay(Dump());
  const ReplayCheck* cos = Find(r, "Torch.cos.0.forward", "");
  ASSERT_NE(cos, nullptr);
  EXPECT_EQ(cos->verdict, ReplayVerdict::kNotReplayable);
  EXPECT_NE(cos->reason.find("Torch.cos.0.forward.input.0.pt"),
            std::string::npos)
      << cos->reason;
  const ReplayCheck* sum = Find(r, "Torch.sum.0.forward", "");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(sum->verdict, ReplayVerdict::kNotReplayable);
  EXPECT_NE(sum->reason.find("Torch.sum.0.forward.output.0.pt"),
            std::string::npos)
      << sum->reason;
  // The others are still replayed.
  EXPECT_NE(Find(r, "Functional.linear.0.forward"), nullptr);
  EXPECT_FALSE(r.first_suspect);
}

// An fp16 mm, written by hand: LibTorch 1.13 has no fp16 mm on the CPU, so
// its own error is computed in fp32 and rounded to fp16.
TEST_F(ReplayTest, HalfMatmulWithoutACpuKernel) {
  std::string rank = RankDir();
  ASSERT_TRUE(CreateDirs(rank + "/dump_tensor_data").ok());
  // Positive terms: the partial sums grow to the size of the result, where
  // accumulating in fp16 loses the most.
  at::Tensor a = at::rand({8, 512}).to(at::kHalf);
  at::Tensor b = at::rand({512, 4}).to(at::kHalf);
  at::Tensor c = at::mm(a.to(at::kDouble), b.to(at::kDouble)).to(at::kHalf);
  auto save = [&](const at::Tensor& t, const std::string& name) {
    StatusOr<Tensor> h = ToHostTensor(t);
    ASSERT_TRUE(h.ok());
    ASSERT_TRUE(WriteTensorFile(rank + "/dump_tensor_data/" + name, *h).ok());
  };
  save(a, "Torch.mm.0.forward.input.0.pt");
  save(b, "Torch.mm.0.forward.input.1.pt");
  save(c, "Torch.mm.0.forward.output.0.pt");
  auto tensor = [](const std::string& name, const char* shape) {
    return std::string(
               "{\"type\": \"torch.Tensor\", \"dtype\": "
               "\"torch.float16\", \"shape\": ") +
           shape + ", \"data_name\": \"" + name + "\"}";
  };
  std::string json =
      "{\"task\": \"tensor\", \"level\": \"L1\", \"dump_data_dir\": null, "
      "\"data\": {\"Torch.mm.0.forward\": {\"input_args\": [" +
      tensor("Torch.mm.0.forward.input.0.pt", "[8, 512]") + ", " +
      tensor("Torch.mm.0.forward.input.1.pt", "[512, 4]") +
      "], \"input_kwargs\": {}, \"output\": [" +
      tensor("Torch.mm.0.forward.output.0.pt", "[8, 4]") +
      "], \"aten\": \"aten::mm\"}}}";
  ASSERT_TRUE(WriteFileAtomic(rank + "/dump.json", json).ok());
  ReplayResult r = Replay(Dump());
  const ReplayCheck* mm = Find(r, "Torch.mm.0.forward");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->verdict, ReplayVerdict::kOk) << mm->reason;
  EXPECT_EQ(mm->dtype, "torch.float16");
  EXPECT_EQ(mm->max_ulp, 0);  // rounded once from the exact product
  EXPECT_TRUE(std::isfinite(mm->cpu_ulp));  // fp32, rounded to fp16
  EXPECT_LE(mm->cpu_ulp, 1);
  // Accumulated in fp16 (an error of a few fp16 ulps per term) instead.
  at::Tensor acc = at::zeros({8, 4}).to(at::kHalf);
  for (int k = 0; k < 512; ++k) {
    acc = (acc.to(at::kFloat) + (a.select(1, k).unsqueeze(1).to(at::kFloat) *
                                 b.select(0, k).unsqueeze(0).to(at::kFloat))
                                    .to(at::kHalf)
                                    .to(at::kFloat))
              .to(at::kHalf);
  }
  save(acc, "Torch.mm.0.forward.output.0.pt");
  ReplayResult bad = Replay(Dump());
  const ReplayCheck* acc16 = Find(bad, "Torch.mm.0.forward");
  ASSERT_NE(acc16, nullptr);
  ASSERT_TRUE(bad.first_suspect) << acc16->max_ulp << " " << acc16->bound << " "
                                 << acc16->bound_rule << " " << acc16->reason;
}

// dump.json entries that lie: every one is listed with why, none crashes,
// none is replayed as something it is not.
TEST_F(ReplayTest, HostileEntriesAreListedNotRun) {
  std::string rank = RankDir();
  ASSERT_TRUE(CreateDirs(rank + "/dump_tensor_data").ok());
  at::Tensor a = at::randn({4, 3});
  StatusOr<Tensor> h = ToHostTensor(a);
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(WriteTensorFile(rank + "/dump_tensor_data/a.pt", *h).ok());
  std::string t =
      "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", "
      "\"shape\": [4, 3], \"data_name\": \"a.pt\"}";
  std::string escape =
      "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", "
      "\"shape\": [4, 3], \"data_name\": \"../../../../etc/passwd\"}";
  auto entry = [&](const std::string& name, const std::string& aten,
                   const std::string& args, const std::string& out) {
    return "\"" + name + "\": {\"input_args\": [" + args +
           "], \"input_kwargs\": {}, \"output\": [" + out + "]" +
           (aten.empty() ? "" : ", \"aten\": " + aten) + "}";
  };
  std::string json =
      "{\"task\": \"tensor\", \"level\": \"L1\", \"data\": {" +
      entry("Torch.nope.0.forward", "\"aten::no_such_op\"", t, t) + ", " +
      entry("Torch.cos.0.forward", "42", t, t) + ", " +
      entry("Torch.cos.1.forward", "\"aten::cos\"",
            "{\"type\": \"int\", \"value\": 3}", t) +
      ", " + entry("Torch.cos.2.forward", "\"aten::cos\"", escape, t) + ", " +
      entry("Torch.ones.0.forward", "\"aten::ones\"",
            "[{\"type\": \"int\", \"value\": 1099511627776}], null, "
            "null, null, null",
            "") +
      ", " + entry("Torch.sum.0.forward", "\"aten::sum\"", t, t) + ", " +
      entry("Torch.mm.0.forward", "\"aten::mm\"", t + ", " + t, t) + "}}";
  ASSERT_TRUE(WriteFileAtomic(rank + "/dump.json", json).ok());
  ReplayResult r = Replay(Dump());
  EXPECT_EQ(r.entries, 7u);
  for (const ReplayCheck& c : r.checks) {
    SCOPED_TRACE(c.entry + ": " + c.reason);
    if (c.entry == "Torch.cos.0.forward") {
      // "aten" that is not a string: the API name says aten::cos, and the
      // recorded output (the input itself) is not cos of the input.
      EXPECT_EQ(c.verdict, ReplayVerdict::kSuspect);
    } else if (c.entry == "Torch.sum.0.forward") {
      // sum of a [4, 3] tensor is a scalar: the recorded [4, 3] is not it.
      EXPECT_EQ(c.verdict, ReplayVerdict::kNotReplayable);
      EXPECT_NE(c.reason.find("shape"), std::string::npos);
    } else {
      EXPECT_EQ(c.verdict, ReplayVerdict::kNotReplayable);
      EXPECT_FALSE(c.reason.empty());
    }
  }
  ASSERT_TRUE(r.first_suspect);
  EXPECT_EQ(r.checks[*r.first_suspect].entry, "Torch.cos.0.forward");
}

TEST_F(ReplayTest, JobsGiveTheSameChecks) {
  DumpTiny(Config(ProbeTask::kTensor));
  ReplayResult one = Replay(Dump(), 1);
  ReplayResult two = Replay(Dump(), 2);
  ASSERT_EQ(one.checks.size(), two.checks.size());
  for (size_t i = 0; i < one.checks.size(); ++i) {
    EXPECT_EQ(one.checks[i].entry, two.checks[i].entry);
    EXPECT_EQ(one.checks[i].tensor, two.checks[i].tensor);
    EXPECT_EQ(one.checks[i].max_ulp, two.checks[i].max_ulp);
  }
}

TEST_F(ReplayTest, NoDumpIsAnError) {
  ReplayOptions o;
  o.dump = (dir_ / "nothing").string();
  EXPECT_FALSE(ReplayDump(o).ok());
}

}  // namespace
}  // namespace lockstep
