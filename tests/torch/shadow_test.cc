// The probe's shadow task: every sampled forward call replayed in float64
// as it runs, its outputs' errors written under the entry's "shadow" key,
// and `lockstep replay` reading them back. A kernel that perturbs cos (a
// DispatchKey::TESTING_ONLY_GenericMode wrapper, as the LeNet example's
// faults) is flagged online, by the probe's own replay ignoring that mode.
#include "torch/shadow.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include "lockstep/compare/comparator.h"
#include "lockstep/format/json_reader.h"
#include "lockstep/torch/replay.h"
#include "torch/probe_testing.h"

namespace lockstep {
namespace {

using testing::Entry;
using testing::Names;
using testing::ProbeTest;
using testing::RunTiny;
using testing::Tiny;

constexpr c10::DispatchKey kWrongKey =
    c10::DispatchKey::TESTING_ONLY_GenericMode;

// cos with results 1e-3 relative off (thousands of fp32 ulps), while a
// WrongCos is alive on the thread.
void WrongCosKernel(const c10::OperatorHandle& op, c10::DispatchKeySet,
                    torch::jit::Stack* stack) {
  c10::impl::ExcludeDispatchKeyGuard exclude(kWrongKey);
  op.callBoxed(stack);
  at::NoGradGuard no_grad;
  stack->back().toTensor().mul_(1 + 1e-3);
}

TORCH_LIBRARY_IMPL(_, TESTING_ONLY_GenericMode, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, TESTING_ONLY_GenericMode, m) {
  m.impl("cos", torch::CppFunction::makeFromBoxedFunction<&WrongCosKernel>());
}

struct WrongCos {
  c10::impl::IncludeDispatchKeyGuard include{kWrongKey};
};

class ShadowTest : public ProbeTest {
 protected:
  ProbeConfig Shadow(double rate = 1) const {
    ProbeConfig c = Config(ProbeTask::kShadow);
    c.sample_rate = rate;
    return c;
  }
  // The entry's "shadow" list; null when the call was not checked.
  static const PyValue* ShadowOf(const PyValue& entry) {
    return entry.Find("shadow");
  }
  static std::string Verdict(const PyValue& entry, size_t i = 0) {
    const PyValue* s = ShadowOf(entry);
    if (s == nullptr || i >= s->items().size()) return "(none)";
    return s->items()[i].Find("verdict")->as_str();
  }
  static std::string Reason(const PyValue& entry) {
    const PyValue* s = ShadowOf(entry);
    if (s == nullptr || s->items().empty()) return "";
    return s->items()[0].Find("reason")->as_str();
  }
};

TEST_F(ShadowTest, TinyEveryForwardCallIsCheckedAndOk) {
  DumpFile d = DumpTiny(Shadow());
  EXPECT_EQ(d.task, "shadow");
  EXPECT_EQ(Names(d), testing::AllTinyNames());
  for (const std::string& name : testing::TinyForwardNames()) {
    SCOPED_TRACE(name);
    const PyValue& e = Entry(d, name);
    const PyValue* s = ShadowOf(e);
    ASSERT_NE(s, nullptr) << e.PyRepr();
    ASSERT_EQ(s->items().size(), 1u);
    const PyValue& r = s->items()[0];
    EXPECT_EQ(r.Find("tensor")->as_str(), "output.0");
    EXPECT_EQ(r.Find("verdict")->as_str(), "ok") << r.PyRepr();
    EXPECT_EQ(r.Find("dtype")->as_str(), "torch.float32");
    EXPECT_LE(r.Find("max_ulp")->as_double(), r.Find("bound")->as_double());
    EXPECT_FALSE(r.Find("bound_rule")->as_str().empty());
    // The statistics task's entry besides, and the operator.
    EXPECT_NE(testing::Item(e, "output", 0).Find("Max"), nullptr);
    EXPECT_TRUE(e.Find("aten")->as_str().starts_with("aten::"));
  }
  // relu is exact: 0 ulp.
  EXPECT_EQ(ShadowOf(Entry(d, "Functional.relu.0.forward"))
                ->items()[0]
                .Find("max_ulp")
                ->as_double(),
            0);
  for (const std::string& name : testing::TinyBackwardNames()) {
    EXPECT_EQ(ShadowOf(Entry(d, name)), nullptr) << name;
  }
  EXPECT_FALSE(std::filesystem::exists(RankDir() + "/dump_tensor_data"));
}

TEST_F(ShadowTest, WrongCosIsFlaggedOnlineAndByReplay) {
  std::unique_ptr<Probe> p = MakeProbe(Shadow());
  Tiny m;
  ASSERT_TRUE(p->Start().ok());
  {
    WrongCos wrong;
    RunTiny(m);
  }
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  EXPECT_EQ(Verdict(Entry(d, "Torch.cos.0.forward")), "suspect");
  EXPECT_NE(Reason(Entry(d, "Torch.cos.0.forward")).find("ulp > bound"),
            std::string::npos);
  // sum of the (wrong) cos outputs is right for its inputs.
  for (const char* ok : {"Functional.linear.0.forward",
                         "Functional.relu.0.forward", "Torch.sum.0.forward"}) {
    EXPECT_EQ(Verdict(Entry(d, ok)), "ok") << ok;
  }

  ReplayOptions o;
  o.dump = (dir_ / "dump").string();
  StatusOr<ReplayResult> r = ReplayDump(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->entries, 8u);
  EXPECT_EQ(r->replayed, 4u);
  EXPECT_EQ(r->skipped, 4u);  // the backward entries
  EXPECT_EQ(r->suspect, 1u);
  ASSERT_TRUE(r->first_suspect);
  const ReplayCheck& s = r->checks[*r->first_suspect];
  EXPECT_EQ(s.entry, "Torch.cos.0.forward");
  EXPECT_EQ(s.op, "aten::cos");
  EXPECT_EQ(s.tensor, "output.0");
  EXPECT_EQ(s.dtype, "torch.float32");
  EXPECT_GT(s.max_ulp, 1000);
  EXPECT_EQ(s.step, 0);
  for (const ReplayCheck& c : r->checks) {
    if (c.entry.ends_with(".backward")) {
      EXPECT_EQ(c.verdict, ReplayVerdict::kSkipped);
      EXPECT_NE(c.reason.find("forward calls only"), std::string::npos);
    }
  }
}

TEST_F(ShadowTest, InPlaceAndOutCallsAreReplayedOnTheirInputsBeforeTheCall) {
  std::unique_ptr<Probe> p = MakeProbe(Shadow());
  ASSERT_TRUE(p->Start().ok());
  at::Tensor x = at::linspace(0.1, 2, 7);
  at::Tensor y = at::linspace(-1, 3, 7);
  x.mul_(y);  // the replay must see x before it was written
  at::Tensor out = at::empty({7});
  at::exp_out(out, y);
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  for (const DumpEntry& e : d.entries) {
    if (!e.name.ends_with(".forward")) continue;
    EXPECT_EQ(Verdict(e.value), "ok") << e.name << " " << e.value.PyRepr();
  }
  EXPECT_EQ(Verdict(Entry(d, "Tensor.mul_.0.forward")), "ok");
}

TEST_F(ShadowTest, RandomCallsAreListedAsNotReplayable) {
  std::unique_ptr<Probe> p = MakeProbe(Shadow());
  ASSERT_TRUE(p->Start().ok());
  at::Tensor x = at::rand({4, 4});
  at::Tensor y = at::dropout(x, 0.5, /*train=*/true);
  at::Tensor z = at::dropout(x, 0.5, /*train=*/false);
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  EXPECT_EQ(Verdict(Entry(d, "Torch.rand.0.forward")), "not replayable");
  EXPECT_NE(Reason(Entry(d, "Torch.rand.0.forward")).find("random operator"),
            std::string::npos);
  EXPECT_EQ(Verdict(Entry(d, "Functional.dropout.0.forward")),
            "not replayable");
  EXPECT_EQ(Verdict(Entry(d, "Functional.dropout.1.forward")), "ok");
}

TEST_F(ShadowTest, SampleRateAndListPickTheSameCallsInEveryRun) {
  auto run = [&](const ProbeConfig& c) {
    std::unique_ptr<Probe> p = MakeProbe(c);
    Tiny m;
    EXPECT_TRUE(p->Start().ok());
    for (int step = 0; step < 3; ++step) {
      for (int i = 0; i < 5; ++i) RunTiny(m, /*backward=*/false);
      EXPECT_TRUE(p->Step().ok());
    }
    EXPECT_TRUE(p->Stop().ok());
  };
  ProbeConfig half = Shadow(0.5);
  half.backward = false;
  half.dump_path = (dir_ / "a").string();
  run(half);
  half.dump_path = (dir_ / "b").string();
  run(half);
  ProbeFilter filter(half);
  size_t checked = 0, calls = 0;
  for (int step = 0; step < 3; ++step) {
    DumpFile a = ReadDump(step, 0, "a"), b = ReadDump(step, 0, "b");
    ASSERT_EQ(Names(a), Names(b));
    for (size_t i = 0; i < a.entries.size(); ++i) {
      const std::string& name = a.entries[i].name;
      bool sampled = ShadowOf(a.entries[i].value) != nullptr;
      EXPECT_EQ(sampled, ShadowOf(b.entries[i].value) != nullptr) << name;
      std::string call = name.substr(0, name.size() - 8);  // ".forward"
      EXPECT_EQ(sampled, filter.Sampled(call, step)) << name;
      checked += sampled;
      ++calls;
    }
  }
  EXPECT_EQ(calls, 60u);
  EXPECT_GT(checked, 10u);
  EXPECT_LT(checked, 50u);

  ProbeConfig cos = Shadow();
  cos.dump_path = (dir_ / "cos").string();
  cos.list = {"aten::cos"};
  cos.backward = false;
  run(cos);
  DumpFile d = ReadDump(0, 0, "cos");
  ASSERT_EQ(d.entries.size(), 5u);
  for (const DumpEntry& e : d.entries) {
    EXPECT_TRUE(e.name.starts_with("Torch.cos.")) << e.name;
    EXPECT_EQ(Verdict(e.value), "ok") << e.name;
  }
}

// A shadow dump is a statistics dump besides: lockstep compare takes it.
TEST_F(ShadowTest, CompareReadsAShadowDumpAsStatistics) {
  DumpFile d = DumpTiny(Shadow());
  StatusOr<CompareMode> m = DetectMode(d, d);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(*m, CompareMode::kStatistics);
}

// What LibTorch throws in the replay becomes a record, never an exception
// in the training step.
TEST(ShadowCheckTest, ARefusedReplayIsNotReplayableWithWhy) {
  c10::OperatorHandle mm =
      c10::Dispatcher::singleton().findSchemaOrThrow("aten::mm", "");
  std::vector<ReplayCheck> c =
      ShadowCheck(&mm, {c10::IValue("x"), c10::IValue("y")}, {});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].verdict, ReplayVerdict::kNotReplayable);
  EXPECT_NE(c[0].reason.find("LibTorch refused"), std::string::npos)
      << c[0].reason;
  c = ShadowCheck(&mm, {c10::IValue(at::ones({2, 2}))}, {});
  EXPECT_NE(c[0].reason.find("do not follow its schema"), std::string::npos);
  c = ShadowCheck(nullptr, {}, {});
  EXPECT_NE(c[0].reason.find("no ATen schema"), std::string::npos);
}

TEST(ShadowRecordTest, WrittenRecordsReadBack) {
  std::vector<ReplayCheck> checks(2);
  checks[0].tensor = "output.0";
  checks[0].dtype = "torch.bfloat16";
  checks[0].kind = "accumulation";
  checks[0].max_ulp = 3.5;
  checks[0].max_rel = 1e-3;
  checks[0].bound = 151;
  checks[0].bound_rule = "sum of 150 terms";
  checks[0].worst_index = 7;
  checks[0].recorded = 1.5;
  checks[0].reference = 1.25;
  checks[0].verdict = ReplayVerdict::kSuspect;
  checks[0].reason = "why";
  checks[1].verdict = ReplayVerdict::kNotReplayable;
  checks[1].reason = "random operator";
  PyJsonBuilder b;
  WriteShadowList(checks, &b);
  StatusOr<PyValue> v = ParsePyJson(b.Take(), "shadow");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ReplayCheck base;
  base.entry = "Torch.mm.0.forward";
  std::vector<ReplayCheck> back = ReadShadowList(*v, base);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].entry, "Torch.mm.0.forward");
  EXPECT_EQ(back[0].tensor, "output.0");
  EXPECT_EQ(back[0].dtype, "torch.bfloat16");
  EXPECT_EQ(back[0].kind, "accumulation");
  EXPECT_EQ(back[0].max_ulp, 3.5);
  EXPECT_EQ(back[0].max_rel, 1e-3);
  EXPECT_TRUE(std::isnan(back[0].cpu_ulp));
  EXPECT_EQ(back[0].bound, 151);
  EXPECT_EQ(back[0].bound_rule, "sum of 150 terms");
  EXPECT_EQ(back[0].worst_index, 7);
  EXPECT_EQ(back[0].recorded, 1.5);
  EXPECT_EQ(back[0].reference, 1.25);
  EXPECT_EQ(back[0].verdict, ReplayVerdict::kSuspect);
  EXPECT_EQ(back[0].reason, "why");
  EXPECT_EQ(back[1].verdict, ReplayVerdict::kNotReplayable);
  EXPECT_EQ(back[1].reason, "random operator");
  // Corrupt records are listed, not dropped.
  StatusOr<PyValue> bad = ParsePyJson(R"([{"verdict": "fine"}, 3])", "shadow");
  ASSERT_TRUE(bad.ok());
  back = ReadShadowList(*bad, base);
  ASSERT_EQ(back.size(), 2u);
  for (const ReplayCheck& c : back) {
    EXPECT_EQ(c.verdict, ReplayVerdict::kNotReplayable);
    EXPECT_NE(c.reason.find("unreadable shadow record"), std::string::npos);
  }
  back = ReadShadowList(PyValue::Str("x"), base);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].verdict, ReplayVerdict::kNotReplayable);
}

}  // namespace
}  // namespace lockstep
