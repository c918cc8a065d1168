// The CLI as msprobe users (and anyone mistyping) meet it: --version,
// `lockstep help <command>`, "did you mean" for commands and options, an
// example in every --help, and compare's msprobe flags (-tp/-gp, -dm,
// -fm, --output_path, default ./output) and --step/--rank selection.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "testing/run_lockstep.h"

namespace {

namespace fs = std::filesystem;
using lockstep::testing::CmdRun;
using lockstep::testing::RunCommand;
using lockstep::testing::RunLockstep;

const std::string kFix = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";
const std::string kData = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data";
const std::string kStatA = kFix + "/toy/statA/out/step0/proc18486";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class MsprobeHabitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ =
        fs::path(::testing::TempDir()) /
        ("habits_" +
         std::string(
             ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
  }
  void TearDown() override { fs::remove_all(tmp_); }
  bool HaveFixtures() const { return fs::exists(kStatA); }
  fs::path tmp_;
};

TEST_F(MsprobeHabitsTest, VersionAndHelpCommand) {
  CmdRun v = RunLockstep("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("lockstep ", 0), 0u) << v.out;
  CmdRun h = RunLockstep("help compare");
  EXPECT_EQ(h.code, 0) << h.out;
  EXPECT_NE(h.out.find("BASELINE"), std::string::npos) << h.out;
  EXPECT_EQ(RunLockstep("help").code, 0);
  CmdRun bad = RunLockstep("help nonsense");
  EXPECT_EQ(bad.code, 2);
}

TEST_F(MsprobeHabitsTest, DidYouMean) {
  CmdRun c = RunLockstep("comapre a b");
  EXPECT_EQ(c.code, 2);
  EXPECT_NE(c.out.find("did you mean 'compare'?"), std::string::npos) << c.out;
  CmdRun far = RunLockstep("zzzzzzzz");
  EXPECT_EQ(far.code, 2);
  EXPECT_EQ(far.out.find("did you mean"), std::string::npos) << far.out;
  CmdRun o = RunLockstep("compare a b --outptu x");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.out.find("did you mean '--output'?"), std::string::npos) << o.out;
  CmdRun f = RunLockstep("curve --metirc loss x.json");
  EXPECT_EQ(f.code, 2);
  EXPECT_NE(f.out.find("did you mean '--metric'?"), std::string::npos) << f.out;
  // A long option cut short.
  CmdRun cut = RunLockstep("compare a b --fuzzy");
  EXPECT_EQ(cut.code, 2);
  EXPECT_NE(cut.out.find("did you mean '--fuzzy-match'?"), std::string::npos)
      << cut.out;
  // A misspelled required option is named, not only the one it misses.
  CmdRun sed = RunLockstep("rng --sed 3");
  EXPECT_EQ(sed.code, 2);
  EXPECT_NE(sed.out.find("not expected: --sed"), std::string::npos) << sed.out;
  EXPECT_NE(sed.out.find("did you mean '--seed'?"), std::string::npos)
      << sed.out;
}

// --metric takes a log's own column name: "lr" is the learning_rate the
// readers store it as.
TEST_F(MsprobeHabitsTest, MetricByTheLogsOwnColumnName) {
  fs::path csv = tmp_ / "lr.csv";
  std::ofstream(csv) << "step,loss,lr\n1,2.0,0.1\n2,1.5,0.1\n";
  CmdRun lr = RunLockstep("curve " + csv.string() + " " + csv.string() +
                          " --metric lr -o " + (tmp_ / "lr_out").string());
  EXPECT_EQ(lr.code, 0) << lr.out;
  EXPECT_EQ(lr.out.find("no log holds it"), std::string::npos) << lr.out;
}

TEST_F(MsprobeHabitsTest, EveryHelpHasAnExample) {
  for (const char* cmd : {"compare", "overflow", "inspect", "export", "curve",
                          "rng", "schedule", "env"}) {
    CmdRun h = RunLockstep(std::string(cmd) + " --help");
    EXPECT_EQ(h.code, 0) << cmd;
    EXPECT_NE(h.out.find("lockstep " + std::string(cmd)), std::string::npos)
        << cmd << " --help shows no example:\n"
        << h.out;
  }
}

TEST_F(MsprobeHabitsTest, TargetAndGoldenPathFlags) {
  if (!HaveFixtures()) GTEST_SKIP() << "fixtures not found";
  fs::path a = tmp_ / "a", b = tmp_ / "b";
  CmdRun pos =
      RunLockstep("compare " + kStatA + " " + kStatA + " -o " + a.string());
  CmdRun flags = RunLockstep("compare -tp " + kStatA + " -gp " + kStatA +
                             " --output_path " + b.string());
  ASSERT_EQ(pos.code, 0) << pos.out;
  ASSERT_EQ(flags.code, 0) << flags.out;
  // The same verdict line (the last line) either way.
  auto last = [](const std::string& s) {
    std::string t = s.substr(0, s.find_last_not_of('\n') + 1);
    return t.substr(t.rfind('\n') + 1);
  };
  EXPECT_EQ(last(pos.out), last(flags.out));
  EXPECT_TRUE(fs::exists(b / "summary.json"));
  // Mixed: one positional and -gp.
  CmdRun mixed = RunLockstep("compare " + kStatA + " -gp " + kStatA + " -o " +
                             (tmp_ / "c").string());
  EXPECT_EQ(mixed.code, 0) << mixed.out;
  // Twice, or neither.
  EXPECT_EQ(RunLockstep("compare " + kStatA + " " + kStatA + " -tp " + kStatA +
                        " -o " + (tmp_ / "d").string())
                .code,
            2);
  CmdRun none = RunLockstep("compare -o " + (tmp_ / "e").string());
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.out.find("TARGET and BASELINE"), std::string::npos)
      << none.out;
}

TEST_F(MsprobeHabitsTest, DefaultOutputIsDotOutput) {
  if (!HaveFixtures()) GTEST_SKIP() << "fixtures not found";
  CmdRun r = RunCommand("cd " + tmp_.string() + " && " +
                        std::string(LOCKSTEP_BIN_DIR) + "/lockstep compare " +
                        kStatA + " " + kStatA + " -q");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(tmp_ / "output" / "summary.json"));
}

TEST_F(MsprobeHabitsTest, DataMappingPairsTheRowsItNames) {
  if (!HaveFixtures()) GTEST_SKIP() << "fixtures not found";
  // The same run on both sides passes; mapping relu's output onto the
  // linear output before it (same shape, negatives not zeroed) must not.
  fs::path map = tmp_ / "map.yaml";
  std::ofstream(map) << "# msprobe -dm\n"
                        "Functional.relu.0.forward.output.0: "
                        "Functional.linear.0.forward.output.0\n";
  fs::path out = tmp_ / "mapped";
  CmdRun r = RunLockstep("compare -tp " + kStatA + " -gp " + kStatA + " -dm " +
                         map.string() + " -o " + out.string());
  EXPECT_EQ(r.code, 1) << r.out;
  std::string summary = Slurp(out / "summary.json");
  EXPECT_NE(summary.find("\"entry\":\"Functional.relu.0.forward\""),
            std::string::npos)
      << summary;
  // A broken mapping file is a clear error naming the line.
  std::ofstream(tmp_ / "bad.yaml") << "a: b\n  nested: c\n";
  CmdRun bad = RunLockstep("compare " + kStatA + " " + kStatA + " -dm " +
                           (tmp_ / "bad.yaml").string() + " -o " +
                           (tmp_ / "x").string());
  EXPECT_EQ(bad.code, 3) << bad.out;
  EXPECT_NE(bad.out.find("line 2"), std::string::npos) << bad.out;
}

TEST_F(MsprobeHabitsTest, StepAndRankSelection) {
  if (!HaveFixtures()) GTEST_SKIP() << "fixtures not found";
  // The root holds steps 0 and 1; step1/ only step 1. Without --step,
  // step 0 is in the target only; with --step 1 nothing is left over; with
  // --step 0 the baseline lacks it.
  const std::string qs = kFix + "/quick_start";
  CmdRun all = RunLockstep("compare " + qs + " " + qs + "/step1 -o " +
                           (tmp_ / "all").string());
  EXPECT_EQ(all.code, 0) << all.out;
  EXPECT_NE(all.out.find("step 0 is in the target only"), std::string::npos)
      << all.out;
  CmdRun one =
      RunLockstep("compare " + qs + " " + qs + "/step1 --step 1 --rank 0 -o " +
                  (tmp_ / "one").string());
  EXPECT_EQ(one.code, 0) << one.out;
  EXPECT_EQ(one.out.find("in the target only"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("PASS: 2822 rows"), std::string::npos) << one.out;
  CmdRun zero = RunLockstep("compare " + qs + " " + qs + "/step1 --step 0 -o " +
                            (tmp_ / "zero").string());
  EXPECT_EQ(zero.code, 2) << zero.out;  // a usage error
  EXPECT_NE(zero.out.find("has no step 0"), std::string::npos) << zero.out;
  CmdRun rank = RunLockstep("compare " + qs + " " + qs + " --rank 3 -o " +
                            (tmp_ / "r3").string());
  EXPECT_EQ(rank.code, 2) << rank.out;
  EXPECT_NE(rank.out.find("has no rank 3"), std::string::npos) << rank.out;
  CmdRun missing = RunLockstep("compare " + qs + " " + qs + " --step 7 -o " +
                               (tmp_ / "s7").string());
  EXPECT_EQ(missing.code, 2) << missing.out;
  EXPECT_NE(missing.out.find("has no step 7"), std::string::npos)
      << missing.out;
}

// A MindSpore dump against a PyTorch one (msprobe's own test inputs):
// -am maps Mint.cos to Torch.cos and pairs the rest by name, as msprobe
// 26.2's ms_compare does (checked live in cross_framework_live_test.py);
// -cm maps cells to modules; -am FILE pairs the arguments it names; -lm
// pairs calls by their place in the two models.
TEST_F(MsprobeHabitsTest, CrossFrameworkMappings) {
  const std::string ms = kFix + "/cross_framework/mindspore";
  const std::string pt = kFix + "/cross_framework/pytorch";
  if (!fs::exists(ms)) GTEST_SKIP() << "no fixtures";
  const std::string out = (tmp_ / "am").string();
  CmdRun am = RunLockstep("compare " + ms + " " + pt + " -am -o " + out);
  EXPECT_EQ(am.code, 1) << am.out;  // requires_grad differs, as msprobe says
  std::string csv;
  for (const auto& f : fs::directory_iterator(out))
    if (f.path().extension() == ".csv") csv = Slurp(f.path());
  EXPECT_NE(csv.find("Mint.cos.0.forward.input.0,Torch.cos.0.forward.input.0"),
            std::string::npos)
      << csv.substr(0, 2000);
  // Without -am the MindSpore-only API stays unpaired.
  const std::string plain = (tmp_ / "plain").string();
  RunLockstep("compare " + ms + " " + pt + " --no-align -o " + plain);
  for (const auto& f : fs::directory_iterator(plain))
    if (f.path().extension() == ".csv") csv = Slurp(f.path());
  EXPECT_NE(csv.find("Mint.cos.0.forward.input.0,N/A"), std::string::npos);

  std::ofstream(tmp_ / "cm.yaml")
      << "network_with_loss.module: module.module\n";
  const std::string cmo = (tmp_ / "cm").string();
  CmdRun cm = RunLockstep("compare " + ms + " " + pt + " -cm " +
                          (tmp_ / "cm.yaml").string() + " -o " + cmo);
  EXPECT_EQ(cm.code, 1) << cm.out;
  for (const auto& f : fs::directory_iterator(cmo))
    if (f.path().extension() == ".csv") csv = Slurp(f.path());
  EXPECT_NE(
      csv.find("Cell.network_with_loss.module.language_model.embedding."
               "word_embeddings.VocabParallelEmbedding.forward.0.input.0,"
               "Module.module.module.language_model.embedding."
               "word_embeddings.VocabParallelEmbedding.forward.0.input.0"),
      std::string::npos)
      << csv.substr(0, 3000);

  // -lm: msprobe's own layer-mapping test dumps (one entry a side, the
  // embedding cell under network_with_loss against module) pair with the
  // rule file and not without it; here, without construct.json and
  // stack.json, rows are matched by name, with a warning.
  const std::string la = kData + "/layer_mapping/msprobe_A";
  const std::string lmo = (tmp_ / "lm").string();
  CmdRun lm =
      RunLockstep("compare " + la + "/mindspore " + la + "/pytorch -o " + lmo +
                  " -lm " + la + "/layer_mapping.yaml");
  EXPECT_EQ(lm.code, 1) << lm.out;  // input 0: Int32 against torch.int64
  EXPECT_NE(lm.out.find("1 pass of 2 rows"), std::string::npos) << lm.out;
  for (const auto& f : fs::directory_iterator(lmo))
    if (f.path().extension() == ".csv") csv = Slurp(f.path());
  EXPECT_NE(csv.find("VocabParallelEmbedding.forward.0.output.0,Module.module."
                     "module.language_model.embedding.word_embeddings."
                     "VocabParallelEmbedding.forward.0.output.0"),
            std::string::npos)
      << csv;
  const std::string lmn = (tmp_ / "lm_nofile").string();
  CmdRun nofile = RunLockstep("compare " + la + "/mindspore " + la +
                              "/pytorch -o " + lmn + " -lm");
  EXPECT_EQ(nofile.code, 1) << nofile.out;  // network_with_loss != module
  for (const auto& f : fs::directory_iterator(lmn))
    if (f.path().extension() == ".csv") csv = Slurp(f.path());
  EXPECT_NE(csv.find("VocabParallelEmbedding.forward.0.output.0,N/A"),
            std::string::npos)
      << csv;
  CmdRun bare = RunLockstep("compare " + ms + " " + pt + " -o " +
                            (tmp_ / "bare").string() + " -lm");
  EXPECT_NE(bare.out.find("found neither: rows matched by name"),
            std::string::npos)
      << bare.out;
  CmdRun lm_dm = RunLockstep("compare " + ms + " " + pt + " -lm -am");
  EXPECT_EQ(lm_dm.code, 2) << lm_dm.out;
  // -am FILE: the arguments it names pair across the two APIs' names.
  std::ofstream(tmp_ / "am.yaml")
      << "- ms_api: Functional.flash_attention_score\n"
         "  pt_api: NPU.npu_fusion_attention\n"
         "  ms_args: [0, 1, 2]\n  pt_args: [0, 1, 2]\n"
         "  ms_output: [0]\n  pt_output: [0]\n";
  const std::string amfo = (tmp_ / "amf").string();
  CmdRun amf = RunLockstep("compare " + ms + " " + pt + " -o " + amfo +
                           " -am " + (tmp_ / "am.yaml").string());
  EXPECT_EQ(amf.code, 1) << amf.out;
  EXPECT_NE(amf.out.find("API mapping: 1 of 1 entries used"), std::string::npos)
      << amf.out;
  for (const auto& f : fs::directory_iterator(amfo))
    if (f.path().extension() == ".csv") csv = Slurp(f.path());
  EXPECT_NE(csv.find("Functional.flash_attention_score.0.forward.input.2,"
                     "NPU.npu_fusion_attention.0.forward.input.2"),
            std::string::npos)
      << csv.substr(0, 3000);
  EXPECT_NE(csv.find("Functional.flash_attention_score.0.forward.input.3,N/A"),
            std::string::npos);
  std::ofstream(tmp_ / "bad.yaml") << "- ms_api: A.b\n  pt_api: C.d\n"
                                      "  ms_arg: [0]\n";
  CmdRun bad = RunLockstep("compare " + ms + " " + pt + " -am " +
                           (tmp_ / "bad.yaml").string());
  EXPECT_EQ(bad.code, 3) << bad.out;  // a bad input file, as a bad -dm file
  EXPECT_NE(bad.out.find("line 3: unknown key 'ms_arg'"), std::string::npos)
      << bad.out;
  // -am before the dumps takes the target as its FILE: said so.
  CmdRun early = RunLockstep("compare -am " + ms + " " + pt);
  EXPECT_EQ(early.code, 2) << early.out;
  EXPECT_NE(early.out.find("put -am after the two dumps"), std::string::npos)
      << early.out;
  CmdRun both = RunLockstep("compare " + ms + " " + pt + " -am -fm");
  EXPECT_EQ(both.code, 2) << both.out;
}

}  // namespace
