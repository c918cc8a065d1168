// The probe's step/rank directories and its filters: steps, ranks,
// data_mode, scope and list.
#include <gtest/gtest.h>

#include "lockstep/torch/probe.h"
#include "torch/probe_testing.h"

namespace lockstep {
namespace {

using testing::AllTinyNames;
using testing::Entry;
using testing::Item;
using testing::Names;
using testing::ProbeTest;
using testing::RunTiny;
using testing::Tiny;
using testing::TinyBackwardNames;
using testing::TinyForwardNames;
namespace fs = std::filesystem;

class ProbeFilterTest : public ProbeTest {
 protected:
  // Runs `steps` steps of Tiny under a probe with `c` and `o`.
  void RunSteps(const ProbeConfig& c, int steps, ProbeOptions o = {}) {
    auto p = MakeProbe(c, o);
    Tiny m;
    ASSERT_TRUE(p->Start().ok());
    for (int i = 0; i < steps; ++i) {
      RunTiny(m);
      ASSERT_TRUE(p->Step().ok());
    }
    ASSERT_TRUE(p->Stop().ok());
  }
  bool HasStep(int64_t step, int64_t rank = 0) const {
    return fs::exists(RankDir(step, rank) + "/dump.json");
  }
};

TEST_F(ProbeFilterTest, EachStepGetsItsOwnStepAndRankDir) {
  ProbeOptions o;
  o.rank = 3;
  o.first_step = 5;
  RunSteps(Config(), 2, o);
  for (int64_t step : {5, 6}) {
    ASSERT_TRUE(HasStep(step, 3)) << step;
    EXPECT_EQ(Names(ReadDump(step, 3)), AllTinyNames()) << step;
  }
  EXPECT_FALSE(HasStep(4, 3));
  EXPECT_FALSE(HasStep(5, 0));
}

TEST_F(ProbeFilterTest, StepsFilterWritesNoDirForSkippedSteps) {
  ProbeConfig c = Config();
  c.steps = {1, 3};
  RunSteps(c, 4);
  EXPECT_FALSE(fs::exists(fs::path(RankDir(0)).parent_path()));
  EXPECT_FALSE(fs::exists(fs::path(RankDir(2)).parent_path()));
  ASSERT_TRUE(HasStep(1));
  ASSERT_TRUE(HasStep(3));
  EXPECT_EQ(Names(ReadDump(1)), AllTinyNames());
  EXPECT_EQ(Names(ReadDump(3)), AllTinyNames());
}

TEST_F(ProbeFilterTest, RanksFilterSkipsOtherRanks) {
  ProbeConfig c = Config();
  c.ranks = {1};
  ProbeOptions o;
  o.rank = 0;
  RunSteps(c, 1, o);
  EXPECT_FALSE(fs::exists(c.dump_path));
  o.rank = 1;
  RunSteps(c, 1, o);
  EXPECT_EQ(Names(ReadDump(0, 1)), AllTinyNames());
}

TEST_F(ProbeFilterTest, DataModeForwardDumpsNoBackward) {
  ProbeConfig c = Config();
  c.backward = false;
  EXPECT_EQ(Names(DumpTiny(c)), TinyForwardNames());
}

TEST_F(ProbeFilterTest, DataModeBackwardDumpsNoForward) {
  ProbeConfig c = Config();
  c.forward = false;
  EXPECT_EQ(Names(DumpTiny(c)), TinyBackwardNames());
}

// Whether every entry has a non-empty `in` side and an empty `out` side.
void ExpectSides(const DumpFile& d, bool inputs, bool outputs) {
  for (const DumpEntry& e : d.entries) {
    bool fwd = e.name.find(".forward") != std::string::npos;
    const PyValue* in = e.value.Find(fwd ? "input_args" : "input");
    const PyValue* out = e.value.Find("output");
    ASSERT_TRUE(in && out) << e.name;
    EXPECT_EQ(in->items().empty(), !inputs) << e.name;
    EXPECT_EQ(out->items().empty(), !outputs) << e.name;
  }
}

TEST_F(ProbeFilterTest, DataModeInputDumpsInputsOnly) {
  ProbeConfig c = Config();
  c.output = false;
  DumpFile d = DumpTiny(c);
  EXPECT_EQ(Names(d), AllTinyNames());
  ExpectSides(d, true, false);
}

TEST_F(ProbeFilterTest, DataModeOutputDumpsOutputsOnly) {
  ProbeConfig c = Config();
  c.input = false;
  DumpFile d = DumpTiny(c);
  EXPECT_EQ(Names(d), AllTinyNames());
  ExpectSides(d, false, true);
}

TEST_F(ProbeFilterTest, DataModeForwardInputIsForwardInputsOnly) {
  ProbeConfig c = Config();
  c.backward = false;
  c.output = false;
  DumpFile d = DumpTiny(c);
  EXPECT_EQ(Names(d), TinyForwardNames());
  ExpectSides(d, true, false);
}

TEST_F(ProbeFilterTest, ScopeDumpsTheIntervalAndItsBackward) {
  ProbeConfig c = Config();
  c.scope = {"Functional.relu.0.forward", "Torch.cos.0.forward"};
  EXPECT_EQ(Names(DumpTiny(c)),
            (std::vector<std::string>{
                "Functional.relu.0.forward", "Torch.cos.0.forward",
                "Torch.cos.0.backward", "Functional.relu.0.backward"}));
}

TEST_F(ProbeFilterTest, ScopeReopensEveryStep) {
  ProbeConfig c = Config();
  c.scope = {"Torch.cos.0.forward", "Torch.sum.0.forward"};
  c.backward = false;
  RunSteps(c, 2);
  for (int64_t step : {0, 1}) {
    EXPECT_EQ(Names(ReadDump(step)),
              (std::vector<std::string>{"Torch.cos.0.forward",
                                        "Torch.sum.0.forward"}))
        << step;
  }
}

TEST_F(ProbeFilterTest, ListSelectsBySubstringAndFullName) {
  ProbeConfig c = Config();
  c.list = {"cos", "Functional.linear.0.forward"};
  EXPECT_EQ(Names(DumpTiny(c)),
            (std::vector<std::string>{
                "Functional.linear.0.forward", "Torch.cos.0.forward",
                "Torch.cos.0.backward", "Functional.linear.0.backward"}));
}

TEST_F(ProbeFilterTest, UnwantedCallsStillCountInTheNumbering) {
  ProbeConfig c = Config();
  c.list = {"Torch.cos.1.forward"};
  c.backward = false;
  auto p = MakeProbe(c);
  at::Tensor x = at::ones({2});
  double cos1 = at::cos(x)[0].item<double>();
  ASSERT_TRUE(p->Start().ok());
  at::cos(at::cos(x));
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  ASSERT_EQ(Names(d), (std::vector<std::string>{"Torch.cos.1.forward"}));
  // The second cos's input is the first one's output: cos(1).
  EXPECT_DOUBLE_EQ(
      testing::Stat(Item(Entry(d, "Torch.cos.1.forward"), "input_args", 0),
                    "Max"),
      cos1);
}

}  // namespace
}  // namespace lockstep
