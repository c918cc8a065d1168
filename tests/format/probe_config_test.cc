#include "lockstep/format/probe_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace lockstep {
namespace {

// msprobe HEAD's python/msprobe/config.json, verbatim
// (docs/msprobe_reference.md §1.4).
constexpr const char* kMsprobeHeadDefault = R"({
    "task": "statistics",
    "dump_path": "./dump_path",
    "rank": [],
    "step": [],
    "level": "L1",
    "extra_info": true,
    "async_dump": false,
    "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"},
    "tensor": {"scope": [], "list": [], "data_mode": ["all"]},
    "acc_check": {"white_list": [], "black_list": [], "error_data_path": "./"}
})";

// msprobe 8.3.3's default with task overflow_check chosen (§1.4).
constexpr const char* kMsprobe833Overflow = R"({
    "task": "overflow_check",
    "dump_path": "./dump_path",
    "rank": [],
    "step": [],
    "level": "L1",
    "enable_dataloader": false,
    "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": "statistics"},
    "tensor": {"scope": [], "list":[], "data_mode": ["all"], "file_format": "npy"},
    "overflow_check": {"overflow_nums": 3, "check_mode":"all"},
    "run_ut": {"white_list": [], "black_list": [], "error_data_path": "./"},
    "grad_probe": {"grad_level": "L1", "param_list": [], "bounds": [-1, 0, 1]},
    "free_benchmark": {"scope": [], "list": [], "fuzz_device": "npu", "pert_mode": "improve_precision",
                       "handler_type": "check", "fuzz_level": "L1", "fuzz_stage": "forward",
                       "if_preheat": false, "preheat_step": 15, "max_sample": 20}
})";

ProbeConfig MustParse(const std::string& json) {
  StatusOr<ProbeConfig> c = ParseProbeConfig(json, "cfg.json");
  EXPECT_TRUE(c.ok()) << c.status().ToString() << "\n" << json;
  return c.ok() ? *c : ProbeConfig();
}

// A config with dump_path plus `extra` top-level keys.
std::string With(const std::string& extra) {
  return "{\"dump_path\": \"d\"" + (extra.empty() ? "" : ", " + extra) + "}";
}

TEST(ParseProbeConfigTest, MsprobeHeadDefaultParses) {
  ProbeConfig c = MustParse(kMsprobeHeadDefault);
  EXPECT_EQ(c.dump_path, "./dump_path");
  EXPECT_EQ(c.task, ProbeTask::kStatistics);
  EXPECT_EQ(c.level, ProbeLevel::kL1);
  EXPECT_TRUE(c.steps.empty());
  EXPECT_TRUE(c.ranks.empty());
  EXPECT_TRUE(c.scope.empty());
  EXPECT_TRUE(c.list.empty());
  EXPECT_TRUE(c.forward && c.backward && c.input && c.output);
  EXPECT_TRUE(c.extra_info);
}

TEST(ParseProbeConfigTest, Msprobe833OverflowCheckParses) {
  ProbeConfig c = MustParse(kMsprobe833Overflow);
  EXPECT_EQ(c.task, ProbeTask::kOverflow);
  EXPECT_EQ(c.overflow_nums, 3);
  EXPECT_EQ(ProbeTaskName(c.task), "overflow_check");
}

TEST(ParseProbeConfigTest, TaskLevelAndExtraInfo) {
  EXPECT_EQ(MustParse(With("\"task\": \"tensor\"")).task, ProbeTask::kTensor);
  EXPECT_EQ(MustParse(With("\"task\": \"md5\"")).task, ProbeTask::kMd5);
  EXPECT_EQ(MustParse(With("\"task\": \"overflow\"")).task,
            ProbeTask::kOverflow);
  EXPECT_EQ(MustParse(With("\"level\": \"L0\"")).level, ProbeLevel::kL0);
  EXPECT_EQ(MustParse(With("\"level\": \"mix\"")).level, ProbeLevel::kMix);
  EXPECT_FALSE(MustParse(With("\"extra_info\": false")).extra_info);
  EXPECT_EQ(ProbeLevelName(ProbeLevel::kMix), "mix");
}

TEST(ParseProbeConfigTest, TensorFormatPtByDefaultNpyAndPackOnRequest) {
  EXPECT_EQ(MustParse(kMsprobeHeadDefault).tensor_format, TensorFormat::kPt);
  EXPECT_EQ(ProbeConfig().tensor_format, TensorFormat::kPt);
  EXPECT_EQ(MustParse(With("\"tensor_format\": \"pack\"")).tensor_format,
            TensorFormat::kPack);
  EXPECT_EQ(MustParse(With("\"tensor_format\": \"npy\"")).tensor_format,
            TensorFormat::kNpy);
  EXPECT_EQ(MustParse(With("\"tensor_format\": \"pt\"")).tensor_format,
            TensorFormat::kPt);
  for (const char* bad :
       {"\"tensor_format\": \"pth\"", "\"tensor_format\": \"npz\"",
        "\"tensor_format\": true"}) {
    auto c = ParseProbeConfig(With(bad), "config.json");
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(c.status().message().find("tensor_format"), std::string::npos)
        << c.status().message();
  }
}

TEST(ParseProbeConfigTest, StepAndRankListsExpandRanges) {
  ProbeConfig c =
      MustParse(With("\"step\": [0, \"4-6\", 2, \"5\"], \"rank\": \"1-3\""));
  EXPECT_EQ(c.steps, (std::vector<int64_t>{0, 2, 4, 5, 6}));
  EXPECT_EQ(c.ranks, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(MustParse(With("\"rank\": 7")).ranks, (std::vector<int64_t>{7}));
}

TEST(ParseProbeConfigTest, SummaryModeMd5SelectsMd5Task) {
  ProbeConfig c = MustParse(
      With("\"task\": \"statistics\", \"statistics\": {\"summary_mode\": "
           "\"md5\"}"));
  EXPECT_EQ(c.task, ProbeTask::kMd5);
  // md5 dumps call their task "statistics", as msprobe does.
  EXPECT_EQ(ProbeTaskName(c.task), "statistics");
}

TEST(ParseProbeConfigTest, ReadsOnlyTheChosenTasksSection) {
  ProbeConfig c = MustParse(
      With("\"task\": \"tensor\", \"statistics\": {\"list\": [\"relu\"]}, "
           "\"tensor\": {\"scope\": [\"A.0.forward\", \"B.0.forward\"], "
           "\"list\": [\"conv\"], \"data_mode\": [\"forward\"]}"));
  EXPECT_EQ(c.list, (std::vector<std::string>{"conv"}));
  EXPECT_EQ(c.scope, (std::vector<std::string>{"A.0.forward", "B.0.forward"}));
  EXPECT_TRUE(c.forward);
  EXPECT_FALSE(c.backward);
}

struct ModeCase {
  const char* modes;  // JSON list
  bool forward, backward, input, output;
};

class DataModeTest : public ::testing::TestWithParam<ModeCase> {};

TEST_P(DataModeTest, FollowsMsprobesPairRule) {
  const ModeCase& m = GetParam();
  ProbeConfig c = MustParse(
      With(std::string("\"statistics\": {\"data_mode\": ") + m.modes + "}"));
  EXPECT_EQ(c.forward, m.forward) << m.modes;
  EXPECT_EQ(c.backward, m.backward) << m.modes;
  EXPECT_EQ(c.input, m.input) << m.modes;
  EXPECT_EQ(c.output, m.output) << m.modes;
}

INSTANTIATE_TEST_SUITE_P(
    Combinations, DataModeTest,
    ::testing::Values(
        ModeCase{"[\"all\"]", true, true, true, true},
        ModeCase{"[]", true, true, true, true},
        ModeCase{"[\"forward\"]", true, false, true, true},
        ModeCase{"[\"backward\"]", false, true, true, true},
        ModeCase{"[\"input\"]", true, true, true, false},
        ModeCase{"[\"output\"]", true, true, false, true},
        ModeCase{"[\"forward\", \"input\"]", true, false, true, false},
        ModeCase{"[\"backward\", \"output\"]", false, true, false, true},
        ModeCase{"[\"forward\", \"backward\"]", true, true, true, true},
        ModeCase{"[\"all\", \"forward\"]", true, true, true, true}));

struct BadCase {
  const char* json;
  const char* key;  // the message must name it
};

class BadValueTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadValueTest, IsInvalidArgumentNamingTheKey) {
  StatusOr<ProbeConfig> c = ParseProbeConfig(GetParam().json, "cfg.json");
  ASSERT_FALSE(c.ok()) << GetParam().json;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument)
      << c.status().ToString();
  const std::string msg = c.status().message();
  EXPECT_NE(msg.find("cfg.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find(GetParam().key), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Keys, BadValueTest,
    ::testing::Values(
        BadCase{R"({"dump_path": "d", "task": "structure"})", "task"},
        BadCase{R"({"dump_path": "d", "task": 1})", "task"},
        BadCase{R"({"dump_path": "d", "level": "L2"})", "level"},
        BadCase{R"({"dump_path": "d", "level": null})", "level"},
        BadCase{R"({"dump_path": 3})", "dump_path"},
        BadCase{R"({"task": "statistics"})", "dump_path"},
        BadCase{R"({"dump_path": ""})", "dump_path"},
        BadCase{R"({"dump_path": "d", "step": [-1]})", "step"},
        BadCase{R"({"dump_path": "d", "step": ["6-4"]})", "step"},
        BadCase{R"({"dump_path": "d", "step": ["x"]})", "step"},
        BadCase{R"({"dump_path": "d", "step": ["4-"]})", "step"},
        BadCase{R"({"dump_path": "d", "step": [1.5]})", "step"},
        BadCase{R"({"dump_path": "d", "step": {"a": 1}})", "step"},
        BadCase{R"({"dump_path": "d", "rank": ["-3"]})", "rank"},
        BadCase{R"({"dump_path": "d", "rank": [true]})", "rank"},
        BadCase{R"({"dump_path": "d", "extra_info": "yes"})", "extra_info"},
        BadCase{R"({"dump_path": "d", "statistics": []})", "statistics"},
        BadCase{R"({"dump_path": "d", "statistics": {"scope": ["A"]}})",
                "scope"},
        BadCase{R"({"dump_path": "d", "statistics": {"scope": "A"}})", "scope"},
        BadCase{R"({"dump_path": "d", "statistics": {"scope": [1, 2]}})",
                "scope"},
        BadCase{R"({"dump_path": "d", "statistics": {"list": "relu"}})",
                "list"},
        BadCase{R"({"dump_path": "d", "statistics": {"data_mode": ["up"]}})",
                "data_mode"},
        BadCase{R"({"dump_path": "d", "statistics": {"data_mode": "all"}})",
                "data_mode"},
        BadCase{R"({"dump_path": "d", "statistics": {"summary_mode": "xor"}})",
                "summary_mode"},
        BadCase{R"({"dump_path": "d", "task": "overflow_check",
                    "overflow_check": {"overflow_nums": 0}})",
                "overflow_nums"},
        BadCase{R"({"dump_path": "d", "task": "overflow_check",
                    "overflow_check": {"overflow_nums": -2}})",
                "overflow_nums"},
        BadCase{R"({"dump_path": "d", "task": "overflow_check",
                    "overflow_check": {"overflow_nums": "1"}})",
                "overflow_nums"},
        BadCase{R"({"dump_path": "d", "task": "shadow",
                    "shadow": {"sample_rate": 0}})",
                "sample_rate"},
        BadCase{R"({"dump_path": "d", "task": "shadow",
                    "shadow": {"sample_rate": -0.5}})",
                "sample_rate"},
        BadCase{R"({"dump_path": "d", "task": "shadow",
                    "shadow": {"sample_rate": 1.5}})",
                "sample_rate"},
        BadCase{R"({"dump_path": "d", "task": "shadow",
                    "shadow": {"sample_rate": NaN}})",
                "sample_rate"},
        BadCase{R"({"dump_path": "d", "task": "shadow",
                    "shadow": {"sample_rate": "0.1"}})",
                "sample_rate"},
        BadCase{R"({"dump_path": "d", "task": "shadow",
                    "shadow": {"sample_rate": true}})",
                "sample_rate"},
        BadCase{R"({"dump_path": "d", "task": "shadow",
                    "shadow": {"list": "conv2d"}})",
                "list"},
        BadCase{R"({"dump_path": "d", "task": "shadow", "shadow": []})",
                "shadow"},
        // Only the shadow task samples: elsewhere it would be ignored.
        BadCase{R"({"dump_path": "d", "statistics": {"sample_rate": 0.5}})",
                "sample_rate"},
        BadCase{R"({"dump_path": "d", "task": "shadow", "sample_rate": 0.5})",
                "sample_rate"}));

TEST(ParseProbeConfigTest, ShadowTaskWithItsSection) {
  ProbeConfig d = MustParse(With(R"("task": "shadow")"));
  EXPECT_EQ(d.task, ProbeTask::kShadow);
  EXPECT_EQ(d.sample_rate, 1);
  EXPECT_EQ(ProbeTaskName(d.task), "shadow");
  ProbeConfig c = MustParse(With(R"("task": "shadow", "shadow": {
      "sample_rate": 0.25, "list": ["Functional.conv2d", "aten::mm"],
      "data_mode": ["forward"]},
      "statistics": {"list": ["relu"]})"));
  EXPECT_EQ(c.sample_rate, 0.25);
  EXPECT_EQ(c.list,
            (std::vector<std::string>{"Functional.conv2d", "aten::mm"}));
  EXPECT_FALSE(c.backward);
  EXPECT_EQ(MustParse(With(R"("task": "shadow", "shadow": {"sample_rate": 1})"))
                .sample_rate,
            1);
}

TEST(ParseProbeConfigTest, BrokenJsonIsCorruption) {
  std::string full = kMsprobeHeadDefault;
  for (size_t cut : {size_t{0}, size_t{1}, size_t{40}, full.size() - 1}) {
    StatusOr<ProbeConfig> c = ParseProbeConfig(full.substr(0, cut), "cfg.json");
    ASSERT_FALSE(c.ok()) << "cut at " << cut;
    EXPECT_EQ(c.status().code(), StatusCode::kCorruption)
        << c.status().ToString();
    EXPECT_NE(c.status().message().find("cfg.json"), std::string::npos);
  }
  for (const char* garbage : {"\x93NUMPY", "[1, 2]", "\"task\"", "{,}",
                              "{\"dump_path\": \"d\"} trailing"}) {
    StatusOr<ProbeConfig> c = ParseProbeConfig(garbage, "cfg.json");
    ASSERT_FALSE(c.ok()) << garbage;
    EXPECT_EQ(c.status().code(), StatusCode::kCorruption) << garbage;
  }
}

TEST(LoadProbeConfigTest, ReadsAFileAndNamesAMissingOne) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("lockstep_cfg_" + std::to_string(::getpid()) + ".json"))
                         .string();
  std::ofstream(path) << kMsprobeHeadDefault;
  StatusOr<ProbeConfig> c = LoadProbeConfig(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->dump_path, "./dump_path");
  StatusOr<ProbeConfig> missing = LoadProbeConfig(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(path), std::string::npos);
}

TEST(ParseIndexRangeTest, SinglesAndRanges) {
  EXPECT_EQ(*ParseIndexRange("7"), (std::vector<int64_t>{7}));
  EXPECT_EQ(*ParseIndexRange("4-6"), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(*ParseIndexRange("3-3"), (std::vector<int64_t>{3}));
  for (const char* bad : {"", "-", "-3", "3-", "6-4", "a-b", "1-2-3", " 4",
                          "4 ", "1.5", "0-99999999999"}) {
    StatusOr<std::vector<int64_t>> r = ParseIndexRange(bad);
    ASSERT_FALSE(r.ok()) << "'" << bad << "'";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
}

ProbeConfig Base() {
  ProbeConfig c;
  c.dump_path = "d";
  return c;
}

TEST(ProbeFilterTest, EmptyStepAndRankListsTakeEverything) {
  ProbeFilter f(Base());
  EXPECT_TRUE(f.StepWanted(0) && f.StepWanted(123456));
  EXPECT_TRUE(f.RankWanted(0) && f.RankWanted(7));
}

TEST(ProbeFilterTest, StepsAndRanksFromJsonSelect) {
  ProbeFilter f(MustParse(With("\"step\": [\"1-2\", 5], \"rank\": [3]")));
  EXPECT_FALSE(f.StepWanted(0));
  EXPECT_TRUE(f.StepWanted(1));
  EXPECT_TRUE(f.StepWanted(2));
  EXPECT_FALSE(f.StepWanted(3));
  EXPECT_TRUE(f.StepWanted(5));
  EXPECT_FALSE(f.RankWanted(0));
  EXPECT_TRUE(f.RankWanted(3));
}

// A ProbeConfig built in code need not list its steps in order.
TEST(ProbeFilterTest, UnsortedStepsAndRanksFromCodeStillMatch) {
  ProbeConfig c = Base();
  c.steps = {5, 1, 3};
  c.ranks = {2, 0};
  ProbeFilter f(c);
  for (int64_t s : {1, 3, 5}) EXPECT_TRUE(f.StepWanted(s)) << s;
  for (int64_t s : {0, 2, 4}) EXPECT_FALSE(f.StepWanted(s)) << s;
  EXPECT_TRUE(f.RankWanted(0));
  EXPECT_TRUE(f.RankWanted(2));
  EXPECT_FALSE(f.RankWanted(1));
}

TEST(ProbeFilterTest, ScopeIsAClosedIntervalInCallOrderPerStep) {
  ProbeConfig c = Base();
  c.scope = {"Torch.add.0.forward", "Torch.mul.0.forward"};
  ProbeFilter f(c);
  for (int step = 0; step < 2; ++step) {
    EXPECT_FALSE(f.ForwardWanted("Functional.linear.0.forward"));
    EXPECT_TRUE(f.ForwardWanted("Torch.add.0.forward"));
    EXPECT_TRUE(f.ForwardWanted("Functional.relu.0.forward"));
    EXPECT_TRUE(f.ForwardWanted("Torch.mul.0.forward"));
    EXPECT_FALSE(f.ForwardWanted("Torch.add.1.forward"));
    // A second start name does not reopen the interval in the same step.
    EXPECT_FALSE(f.ForwardWanted("Torch.add.0.forward"));
    f.ResetStep();
  }
}

TEST(ProbeFilterTest, ScopeWhoseStartNeverComesTakesNothing) {
  ProbeConfig c = Base();
  c.scope = {"Torch.nothing.0.forward", "Torch.add.0.forward"};
  ProbeFilter f(c);
  EXPECT_FALSE(f.ForwardWanted("Torch.add.0.forward"));
  EXPECT_FALSE(f.ForwardWanted("Torch.mul.0.forward"));
}

TEST(ProbeFilterTest, ListMatchesFullNamesAndSubstrings) {
  ProbeConfig c = Base();
  c.list = {"relu", "Torch.add.1.forward"};
  ProbeFilter f(c);
  EXPECT_TRUE(f.ForwardWanted("Functional.relu.0.forward"));
  EXPECT_TRUE(f.ForwardWanted("Functional.relu.7.forward"));
  EXPECT_TRUE(f.ForwardWanted("Torch.add.1.forward"));
  EXPECT_FALSE(f.ForwardWanted("Torch.add.0.forward"));
  EXPECT_FALSE(f.ForwardWanted("Functional.linear.0.forward"));
}

TEST(ProbeFilterTest, ListAtenNamesMatchTheOperatorAnyOverload) {
  ProbeConfig c = Base();
  c.list = {"aten::add", "aten::mul.Tensor"};
  ProbeFilter f(c);
  EXPECT_TRUE(f.ForwardWanted("Torch.add.0.forward", {}, "aten::add.Tensor"));
  // The in-place variant is another operator (list it as aten::add_).
  EXPECT_FALSE(f.ForwardWanted("Tensor.__iadd__.0.forward", {}, "aten::add_"));
  EXPECT_FALSE(f.ForwardWanted("Torch.addmm.0.forward", {}, "aten::addmm"));
  EXPECT_TRUE(f.ForwardWanted("Torch.mul.0.forward", {}, "aten::mul.Tensor"));
  EXPECT_FALSE(f.ForwardWanted("Torch.mul.1.forward", {}, "aten::mul.Scalar"));
  // Without the ATen name (a task that does not record it) only names.
  EXPECT_FALSE(f.ForwardWanted("Torch.add.1.forward"));
}

TEST(ProbeFilterTest, SamplingIsDeterministicPerCallAndStep) {
  ProbeConfig c = Base();
  EXPECT_TRUE(ProbeFilter(c).Sampled("Torch.add.0", 0));  // rate 1: all
  c.sample_rate = 0.1;
  ProbeFilter f(c), g(c);
  int taken = 0, same_in_next_step = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    std::string call = "Functional.linear." + std::to_string(i);
    bool s = f.Sampled(call, 3);
    EXPECT_EQ(s, g.Sampled(call, 3)) << call;  // another run: the same
    taken += s;
    same_in_next_step += s && f.Sampled(call, 4);
  }
  // Binomial(20000, 0.1): mean 2000, sd 42.
  EXPECT_NEAR(taken, 2000, 250);
  // Steps sample independently: 10% of those again.
  EXPECT_NEAR(same_in_next_step, 200, 80);
}

TEST(ProbeFilterTest, ListNamingAModuleTakesEverythingInsideIt) {
  ProbeConfig c = Base();
  c.list = {"Module.fc1.Linear.forward.0"};
  ProbeFilter f(c);
  EXPECT_TRUE(
      f.ForwardWanted("Functional.linear.0.forward",
                      {"Module.Net.forward.0", "Module.fc1.Linear.forward.0"}));
  EXPECT_FALSE(
      f.ForwardWanted("Functional.linear.1.forward",
                      {"Module.Net.forward.0", "Module.fc2.Linear.forward.0"}));
  EXPECT_FALSE(f.ForwardWanted("Functional.linear.2.forward"));
}

TEST(ProbeFilterTest, ScopeAndListMustBothHold) {
  ProbeConfig c = Base();
  c.scope = {"Torch.add.0.forward", "Torch.add.2.forward"};
  c.list = {"add"};
  ProbeFilter f(c);
  EXPECT_TRUE(f.ForwardWanted("Torch.add.0.forward"));
  EXPECT_FALSE(f.ForwardWanted("Torch.mul.0.forward"));  // in scope, not list
  EXPECT_TRUE(f.ForwardWanted("Torch.add.1.forward"));
  EXPECT_TRUE(f.ForwardWanted("Torch.add.2.forward"));
  EXPECT_FALSE(f.ForwardWanted("Torch.add.3.forward"));  // in list, not scope
}

TEST(ProbeFilterTest, DataModeSidesAndDirections) {
  ProbeFilter fwd_in(
      MustParse(With("\"statistics\": {\"data_mode\": [\"forward\", "
                     "\"input\"]}")));
  EXPECT_TRUE(fwd_in.ForwardWanted("Torch.add.0.forward"));
  EXPECT_FALSE(fwd_in.BackwardWanted());
  EXPECT_TRUE(fwd_in.InputsWanted());
  EXPECT_FALSE(fwd_in.OutputsWanted());

  // Backward only: the forward entry is still "wanted" so that its
  // backward can be hooked.
  ProbeFilter bwd(
      MustParse(With("\"statistics\": {\"data_mode\": [\"backward\"]}")));
  EXPECT_TRUE(bwd.ForwardWanted("Torch.add.0.forward"));
  EXPECT_TRUE(bwd.BackwardWanted());
  EXPECT_TRUE(bwd.InputsWanted() && bwd.OutputsWanted());

  ProbeConfig none = Base();
  none.forward = none.backward = false;
  ProbeFilter nothing(none);
  EXPECT_FALSE(nothing.ForwardWanted("Torch.add.0.forward"));
}

TEST(ValidateProbeConfigTest, CodeBuiltConfigsAreChecked) {
  ProbeConfig c = Base();
  EXPECT_TRUE(ValidateProbeConfig(c).ok());
  c.scope = {"a", "b", "c"};
  Status st = ValidateProbeConfig(c);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("scope"), std::string::npos);
  c = Base();
  c.overflow_nums = 0;
  EXPECT_NE(ValidateProbeConfig(c).message().find("overflow_nums"),
            std::string::npos);
  c.overflow_nums = -1;
  EXPECT_TRUE(ValidateProbeConfig(c).ok());
  for (double bad : {0.0, -1.0, 1.01, std::nan("")}) {
    ProbeConfig s = Base();
    s.sample_rate = bad;
    EXPECT_NE(ValidateProbeConfig(s).message().find("sample_rate"),
              std::string::npos)
        << bad;
  }
  c.dump_path.clear();
  EXPECT_NE(ValidateProbeConfig(c).message().find("dump_path"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// msprobe reads scope, list, data_mode, summary_mode and overflow_nums
// from the task's section only: at the top level they would be ignored
// (summary_mode md5 there once made a benchmark measure statistics).
TEST(ProbeConfigTest, SectionKeysAtTheTopLevelAreRefused) {
  for (const char* key : {"summary_mode", "scope", "list", "data_mode",
                          "overflow_nums", "sample_rate"}) {
    std::string text =
        std::string("{\"task\": \"statistics\", \"") + key + "\": \"md5\"}";
    auto c = ParseProbeConfig(text, "config.json");
    ASSERT_FALSE(c.ok()) << key;
    EXPECT_NE(c.status().message().find("task's section"), std::string::npos)
        << c.status().message();
  }
  auto ok = ParseProbeConfig(
      R"({"task": "statistics", "dump_path": "d", "statistics": {"summary_mode": "md5"}})",
      "config.json");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->task, ProbeTask::kMd5);
}

// A misspelled key is an error naming the closest one (it passed silently:
// the dump went to the default place). msprobe's keys that lockstep does
// not use still parse, so one config.json serves both.
TEST(ProbeConfigTest, UnknownKeysAreRefusedWithTheClosestKnownOne) {
  auto bad = ParseProbeConfig(R"({"task": "statistics", "dump_pth": "/x"})",
                              "config.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(
                "unknown config key 'dump_pth'; did you mean 'dump_path'?"),
            std::string::npos)
      << bad.status().message();
  bad = ParseProbeConfig(R"({"dump_path": "/x", "statistics": {"scpoe": []}})",
                         "config.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown key in the 'statistics' "
                                        "section 'scpoe'; did you mean "
                                        "'scope'?"),
            std::string::npos)
      << bad.status().message();
  EXPECT_EQ(ProbeConfigKeysProblem(R"({"zzz": 1})"),
            "unknown config key 'zzz'");
  // msprobe's own keys and tasks lockstep does not use.
  auto ok = ParseProbeConfig(
      R"({"task": "statistics", "dump_path": "/x", "async_dump": false,
          "precision": "high", "free_benchmark": {"fuzz_device": "npu"},
          "run_ut": {"white_list": []}, "api_names": "python"})",
      "config.json");
  EXPECT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ProbeConfigKeysProblem(R"({"task": "tensor", "level": "L1"})"), "");
}

}  // namespace
}  // namespace lockstep
